import type { EmailTemplate } from './email-template';

/** `last_event` values of an email, as Resend names them. */
export type EmailEvent =
  | 'queued'
  | 'scheduled'
  | 'canceled'
  | 'sent'
  | 'delivered'
  | 'delivery_delayed'
  | 'bounced'
  | 'complained'
  | 'opened'
  | 'clicked'
  | 'failed'
  | 'suppressed';

export type EmailSource = 'api' | 'smtp';

/** An email as stored: the record of what the customer handed over. */
export interface EmailRecord {
  id: string;
  teamId: string;
  region: string;
  source: EmailSource;
  from: string;
  to: string[];
  cc: string[] | null;
  bcc: string[] | null;
  replyTo: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  tags: { name: string; value: string }[] | null;
  messageId: string;
  lastEvent: EmailEvent;
  scheduledAt: Date | null;
  createdAt: Date;
}

export type EmailSummary = Omit<EmailRecord, 'html' | 'text' | 'tags' | 'headers'>;

/** An attachment as the send path accepted it. */
export interface NewAttachment {
  filename: string | null;
  /** Null only for a remote (`path`) attachment without a hint: the fetch response decides. */
  contentType: string | null;
  contentId: string | null;
  path: string | null;
  content: Buffer | null;
  /** Decoded bytes; 0 for a remote attachment, whose size is known only once fetched. */
  size: number;
}

/** What the store needs of an accepted email (the accepting context's NormalizedEmail is one). */
export interface EmailContent {
  /** As sent (trimmed), e.g. `Acme <hi@acme.com>`. */
  from: string;
  /**
   * Lowercased ASCII (punycode) form of the sender's domain, so it matches the verified domain
   * however it was typed; the default Message-ID's right-hand side.
   */
  fromDomain: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  attachments: NewAttachment[];
  tags: { name: string; value: string }[] | null;
  scheduledAt: Date | null;
  /** Bare addresses, each once (case-insensitive, first kind wins): quota counts people, not lines. */
  recipients: { kind: 'to' | 'cc' | 'bcc'; address: string }[];
}

/** What the send path writes for one accepted email. */
export interface NewEmail<E extends EmailContent = EmailContent> {
  id: string;
  teamId: string;
  region: string;
  source: EmailSource;
  /** The API key that sent it (REST or the SMTP relay); null for Herald's own mail. */
  apiKeyId: string | null;
  /** The broadcast it is one recipient's copy of (libs/broadcasts); absent for the API's and the relay's mail. */
  broadcastId?: string | null;
  idempotencyKey: string | null;
  /**
   * Its row in the dispatch outbox: one per request and region for emails sent now (see
   * dispatchIdsOf), the email's own id for a scheduled one.
   */
  dispatchId: string;
  email: E;
  /**
   * Bodies filled in when read, from a template stored once for many emails (a broadcast's) and
   * this email's values; `email.html` and `email.text` are then null. See email-template.ts.
   */
  template?: { of: EmailTemplate; values: string[] } | null;
  /**
   * SMTP only: the message to send as is (stored in email_mime, DKIM-signed by the worker) and
   * its Message-ID (with angle brackets), the client's or the one Herald wrote into `mime`.
   * The message may come in parts (the relay's rewritten header and the body as received), joined
   * once, into the insert's parameter (email-insert.ts). A large message's body went
   * to Postgres as it arrived (`upload`, MimeUploadsRepository): its chunks follow `mime`.
   */
  raw?: { mime: Buffer | Buffer[]; messageId: string; upload?: MimeUpload };
}

/** The stored chunks of a message body (email_mime_uploads): all `chunks` of them must be there. */
export interface MimeUpload {
  id: string;
  chunks: number;
}
