import { HeraldError } from '@herald/core';
import type { EmailContent, NewAttachment } from '@herald/messages';

/** Per-deployment limits, from the config schema (MAX_RECIPIENTS, MAX_EMAIL_BYTES, ...). */
export interface SendLimits {
  maxRecipients: number;
  maxEmailBytes: number;
  maxBatchSize: number;
  maxScheduleDays: number;
}

export type NormalizedAttachment = NewAttachment;

/** A send request as validated: what the email store keeps, and what the send path checks besides. */
export interface NormalizedEmail extends EmailContent {
  /** Bare address, e.g. `hi@acme.com`. */
  fromAddress: string;
  /** Subject, bodies, custom headers and base64-encoded attachments, in bytes. */
  sizeBytes: number;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; error: HeraldError };

export const accept = <T>(value: T): Validated<T> => ({ ok: true, value });

export const reject = <T = never>(error: HeraldError): Validated<T> => ({ ok: false, error });
