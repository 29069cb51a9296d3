/**
 * Every reply Herald writes on SMTP. A refusal that is a rule of the send path shared with the API
 * (a bad key, the sending domain, rate, quota, idempotency) is a HeraldError and gets its reply
 * from smtp-error-mapping.ts, by code; the rest here have no code, on purpose: they are rules of
 * SMTP itself (no STARTTLS, bare LF, source routes, a session too long), of the envelope and the
 * MIME message, which the API never sees (its bodies are JSON), or a step's own temporary failure.
 * A code for them would add SMTP-only members that the HTTP and JetStream maps must then answer
 * for. smtp-server writes the protocol's own replies itself (`250 Accepted`, `354 End data with
 * <CR><LF>.<CR><LF>`, `221 Bye`, the `334` AUTH challenges). The specs assert these on the wire
 * byte for byte.
 */

/** An SMTP reply: `550`, `5.7.1`, text. Rendered as `550 5.7.1 <text>`. */
export interface SmtpReply {
  code: number;
  enhanced: string;
  message: string;
}

export const smtpReply = (code: number, enhanced: string, message: string): SmtpReply => ({ code, enhanced, message });

export type SmtpError = Error & { responseCode: number };
export const smtpError = (responseCode: number, message: string): SmtpError => Object.assign(new Error(message), { responseCode });
/** `550 5.7.1 text`: smtp-server writes the code, the text carries the enhanced code. */
export const replyError = (reply: SmtpReply): SmtpError => smtpError(reply.code, `${reply.enhanced} ${reply.message}`);

/** A reply as written on the wire: its code, and its text (which starts with the enhanced code). */
export interface WireReply {
  code: number;
  text: string;
}

const wire = (code: number, text: string): WireReply => ({ code, text });
export const wireError = (reply: WireReply): SmtpError => smtpError(reply.code, reply.text);

/** The replies the relay itself writes (the submission port's come from SMTP_SUBMISSION_REPLIES and smtpReplyFor). */
export const RELAY_REPLIES = {
  /** After the 220 and the hostname. */
  greeting: wire(220, 'Herald SMTP relay'),
  /** Also smtp-server's answer to MAIL FROM before AUTH. */
  authRequired: wire(530, '5.7.0 Authentication required'),
  startTlsFirst: wire(530, '5.7.0 Must issue a STARTTLS command first'),
  /** An AUTH mechanism other than PLAIN and LOGIN. */
  unknownAuthMethod: wire(504, '5.5.4 Unrecognized authentication type'),
  authTemporary: wire(454, '4.7.0 Temporary authentication failure, try again later'),
  /** Then the connection is closed: the session's key was deleted since its AUTH. */
  keyRevoked: wire(530, '5.7.0 Authentication required: the API key of this session was revoked or deleted'),
  /** After the failed AUTH that reached the per-connection limit (421 closes). */
  tooManyAuthFailures: wire(421, '4.7.0 Too many failed authentication attempts, closing connection'),
  /** To any AUTH from an address over the per-address limit, before the key is looked at. */
  addressBlocked: wire(421, '4.7.0 Too many failed authentication attempts from your address, try again later'),
  /** `MAIL FROM:<@a:user@c>` and `RCPT TO:<@a:user@c>`. */
  sourceRoute: wire(553, '5.1.3 Source routes are not accepted: give the final address only'),
  tryLater: wire(451, '4.3.0 Temporary failure, try again later'),
  sessionTooLong: wire(421, '4.4.2 Session too long, closing connection'),
  shuttingDown: wire(421, '4.3.2 Service shutting down, try again later'),
  /** At connect, then the close: the client's address holds SMTP_MAX_CONNECTIONS_PER_CLIENT sessions already. */
  tooManyClientConnections: wire(421, '4.7.0 Too many connections from your address, try again later'),
  /** At connect, then the close: the process holds SMTP_MAX_CONNECTIONS sessions already. */
  tooManyConnections: wire(421, '4.3.2 Too many connections, try again later'),
  bareLf: wire(550, '5.6.11 Message refused: bare LF line ending (lines must end with CRLF)'),
  bareCr: wire(550, '5.6.11 Message refused: bare CR (lines must end with CRLF)'),
  tooBig: (maxBytes: number) => wire(552, `5.3.4 Message exceeds fixed maximum message size ${maxBytes}`),
  accepted: (id: string) => wire(250, `2.0.0 OK ${id}`),
} as const;

/** The replies of the bounce MX (bounce/bounce-mx.ts). */
export const BOUNCE_MX_REPLIES = {
  greeting: wire(220, 'bounce and feedback MX'),
  /** At RCPT TO: not a VERP address with a valid tag. */
  noSuchUser: wire(550, '5.1.1 no such user here'),
  tooBig: (maxBytes: number) => wire(552, `5.3.4 message exceeds fixed maximum message size ${maxBytes}`),
  notAReport: wire(250, '2.0.0 OK: not a report, ignored'),
  recorded: wire(250, '2.0.0 OK: report recorded'),
  /** A message to a broadcast email's List-Unsubscribe mailbox. */
  unsubscribed: wire(250, '2.0.0 OK: unsubscribed'),
  /** The report could not be recorded; the sender keeps it and tries again. */
  tryLater: wire(451, '4.3.0 try again later'),
  /** At connect, then the close, as the relay does. */
  tooManyClientConnections: RELAY_REPLIES.tooManyClientConnections,
  tooManyConnections: RELAY_REPLIES.tooManyConnections,
} as const;

const temporary = (what: string) => smtpReply(451, '4.3.0', `Temporary failure ${what}, try again later`);

/** The refusals of the send path's checks (SmtpSubmissions); the first, rateLimited and badIdempotencyKey are answered through smtpReplyFor. */
export const SMTP_SUBMISSION_REPLIES = {
  invalidCredentials: smtpReply(535, '5.7.8', 'Authentication credentials invalid'),
  authTemporary: smtpReply(454, '4.7.0', 'Temporary authentication failure, try again later'),
  nullSender: smtpReply(553, '5.1.7', 'The null sender is not accepted: MAIL FROM must be an address on your domain'),
  malformedSender: (address: string, problem: string) => smtpReply(553, '5.1.7', `Malformed sender address <${address}>: ${problem}`),
  rateLimited: (seconds: number) => smtpReply(451, '4.7.1', `Rate limit exceeded, try again in ${seconds} s`),
  malformedRecipient: (address: string, problem: string) =>
    smtpReply(553, '5.1.3', `Malformed or refused recipient address <${address}>: ${problem}`),
  tooManyRecipients: smtpReply(452, '4.5.3', 'Too many recipients'),
  suppressed: (address: string) => smtpReply(550, '5.1.1', `<${address}> is on the suppression list (previous bounce or complaint)`),
  tooBig: (maxBytes: number) => smtpReply(552, '5.3.4', `Message size exceeds the limit of ${maxBytes} bytes`),
  noRecipients: smtpReply(554, '5.5.1', 'No valid recipients'),
  overlongHeader: (octets: number, which: string, max: number) =>
    smtpReply(
      550,
      '5.6.0',
      `Message refused: a header line is ${octets} octets long${which}, RFC 5322 allows ${max}: fold it, or encode long words (RFC 2047)`,
    ),
  badIdempotencyKey: (maxLength: number) =>
    smtpReply(550, '5.6.0', `The Herald-Idempotency-Key (or Resend-Idempotency-Key) header must be one value of 1-${maxLength} characters`),
  unparsable: (reason: string) => smtpReply(550, '5.6.0', `The message could not be parsed: ${reason}`),
  noFrom: smtpReply(550, '5.7.1', 'The message must have a From header with exactly one valid address on a domain you have verified'),
  checkingSender: temporary('checking the sender'),
  checkingRecipient: temporary('checking the recipient'),
  storing: temporary('storing the message'),
} as const;
