// The port is declared by the SMTP edge (@herald/smtp); the send path implements it here.
export { SMTP_SUBMISSIONS } from '@herald/smtp';
export type { SmtpEnvelope, SmtpReply, SmtpSubmissionPort, SubmissionResult } from '@herald/smtp';
