import type { SmtpReply } from './submission-port';

export type SmtpError = Error & { responseCode: number };
export const smtpError = (responseCode: number, message: string): SmtpError => Object.assign(new Error(message), { responseCode });
/** `550 5.7.1 text`: smtp-server writes the code, the text carries the enhanced code. */
export const replyError = (reply: SmtpReply): SmtpError => smtpError(reply.code, `${reply.enhanced} ${reply.message}`);

/** The replies the relay itself writes (the port's refusals come from the port). */
export const RELAY_REPLIES = {
  authRequired: '5.7.0 Authentication required',
  startTlsFirst: '5.7.0 Must issue a STARTTLS command first',
  authTemporary: '4.7.0 Temporary authentication failure, try again later',
  /** 530, then the connection is closed: the session's key was deleted since its AUTH. */
  keyRevoked: '5.7.0 Authentication required: the API key of this session was revoked or deleted',
  /** 421 after the failed AUTH that reached the per-connection limit. */
  tooManyAuthFailures: '4.7.0 Too many failed authentication attempts, closing connection',
  /** 421 to any AUTH from an address over the per-address limit, before the key is looked at. */
  addressBlocked: '4.7.0 Too many failed authentication attempts from your address, try again later',
  tryLater: '4.3.0 Temporary failure, try again later',
  sessionTooLong: '4.4.2 Session too long, closing connection',
  shuttingDown: '4.3.2 Service shutting down, try again later',
  bareLf: '5.6.11 Message refused: bare LF line ending (lines must end with CRLF)',
  bareCr: '5.6.11 Message refused: bare CR (lines must end with CRLF)',
  tooBig: (maxBytes: number) => `5.3.4 Message exceeds fixed maximum message size ${maxBytes}`,
  accepted: (id: string) => `2.0.0 OK ${id}`,
} as const;
