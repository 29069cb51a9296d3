import type { Principal } from '@herald/accounts';
import type { SmtpReply } from './smtp-replies';

/**
 * The SMTP relay's view of the send path: what the listener asks at each step of a session, and
 * the SMTP reply each refusal becomes. The same validation, domain enforcement, suppression,
 * quota, rate limit and idempotency as `POST /emails`, in SMTP's terms. Implemented by
 * SmtpSubmissions; SmtpRelay knows only this interface, so its specs answer with a fake.
 */

export interface SmtpEnvelope {
  /** MAIL FROM, bare (may be empty only for bounces, which the relay refuses). */
  mailFrom: string;
  /** Every accepted RCPT TO, bare, in order: To, Cc and Bcc all come from here. */
  rcptTo: string[];
}

export type SubmissionResult = { ok: true; id: string } | { ok: false; reply: SmtpReply };

/**
 * Where the rest of a large message goes as it arrives, past the start the relay holds (its whole
 * header and the start of its body), so that the relay never holds the whole message.
 */
export interface MessageSpool {
  /** Stores the next bytes of the message; resolves when there is room for more (backpressure). Never rejects: a failure shows at submit. */
  write(chunk: Buffer): Promise<void>;
  /** Drops what was stored, for a message that is refused or not accepted. Never rejects. */
  discard(): Promise<void>;
}

export interface SmtpSubmissionPort {
  /** After AUTH (username `herald`, password an API key): the principal, or a 535 reply. */
  authenticate(username: string, password: string): Promise<{ ok: true; principal: Principal } | { ok: false; reply: SmtpReply }>;
  /** At MAIL FROM: the domain must be one the team (or the key) may send from; the rate limit is taken here. */
  checkMailFrom(principal: Principal, mailFrom: string): Promise<SmtpReply | null>;
  /** At RCPT TO: malformed or relay-trick addresses (553), suppressed addresses (550); null accepts it. */
  checkRecipient(principal: Principal, address: string, accepted: number): Promise<SmtpReply | null>;
  /**
   * At the end of DATA: validates the message (From header on an allowed domain, size, headers),
   * applies idempotency (Herald-Idempotency-Key / Resend-Idempotency-Key, stripped), reserves
   * quota, persists the email with its raw MIME and dispatches it. `ok` only once it is durable.
   * With `spool` (one `spool()` gave), `raw` is the start of the message and the spool has the rest.
   */
  submit(principal: Principal, envelope: SmtpEnvelope, raw: Buffer, spool?: MessageSpool): Promise<SubmissionResult>;
  /**
   * At DATA, once the relay holds the whole header and SPOOL_AFTER_BYTES of the message (`head`):
   * a spool for the rest. Without this method the relay holds every message whole.
   */
  spool?(head: Buffer): MessageSpool;
}
