import { HeraldError } from '@herald/core';

/** Per-deployment limits, from the config schema (MAX_RECIPIENTS, MAX_EMAIL_BYTES, ...). */
export interface SendLimits {
  maxRecipients: number;
  maxEmailBytes: number;
  maxBatchSize: number;
  maxScheduleDays: number;
}

export interface NormalizedAttachment {
  filename: string | null;
  /** Null only for a remote (`path`) attachment without a hint: the fetch response decides. */
  contentType: string | null;
  contentId: string | null;
  path: string | null;
  content: Buffer | null;
  /** Decoded bytes; 0 for a remote attachment, whose size is known only once fetched. */
  size: number;
}

export interface NormalizedEmail {
  /** As sent (trimmed), e.g. `Acme <hi@acme.com>`. */
  from: string;
  /** Bare address, e.g. `hi@acme.com`. */
  fromAddress: string;
  /** Lowercased ASCII (punycode) form, so it matches the verified domain however it was typed. */
  fromDomain: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  attachments: NormalizedAttachment[];
  tags: { name: string; value: string }[] | null;
  scheduledAt: Date | null;
  /** Bare addresses, each once (case-insensitive, first kind wins): quota counts people, not lines. */
  recipients: { kind: 'to' | 'cc' | 'bcc'; address: string }[];
  /** Subject, bodies, custom headers and base64-encoded attachments, in bytes. */
  sizeBytes: number;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; error: HeraldError };

export const accept = <T>(value: T): Validated<T> => ({ ok: true, value });

export const reject = <T = never>(error: HeraldError): Validated<T> => ({ ok: false, error });
