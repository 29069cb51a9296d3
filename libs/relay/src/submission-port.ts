// The send path's side of the relay, implemented by @herald/emails (SmtpSubmissionModule).
export { SMTP_SUBMISSIONS } from '@herald/emails';
export type { SmtpEnvelope, SmtpReply, SmtpSubmissionPort, SubmissionResult } from '@herald/emails';
