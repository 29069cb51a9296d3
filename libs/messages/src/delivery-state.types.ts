import type { Transaction } from '@herald/database';
import type { EmailEventRecord, EmailFacts } from './email-events';

export type RecipientStatus = 'queued' | 'sending' | 'deferred' | 'delivered' | 'bounced' | 'suppressed' | 'failed';

export interface ClaimedRecipient {
  position: number;
  kind: 'to' | 'cc' | 'bcc';
  address: string;
  /** Attempts including this one. */
  attempts: number;
  /** The suppression list's origin when the address is on it. */
  suppressedBy: 'bounce' | 'complaint' | 'manual' | null;
}

export interface ClaimedAttachment {
  filename: string | null;
  contentType: string | null;
  contentId: string | null;
  path: string | null;
  content: Buffer | null;
}

/** An email some of whose recipients this worker now holds, with what it needs to send it. */
export interface ClaimedEmail extends EmailFacts {
  token: string;
  generation: number;
  /** No event had been recorded yet: this claim makes it `sent`. */
  firstClaim: boolean;
  to: string[];
  cc: string[] | null;
  replyTo: string[] | null;
  html: string | null;
  text: string | null;
  /** When the email became due (its schedule, or its acceptance): retries expire from here. */
  dueAt: Date;
  recipients: ClaimedRecipient[];
  attachments: ClaimedAttachment[];
  /** The message as submitted over SMTP (email_mime), sent as is; null for an API email. */
  mime: Buffer | null;
}

export interface RecipientUpdate {
  position: number;
  status: RecipientStatus;
  response: string | null;
  /** The MX host that answered. */
  mx: string | null;
  /** A deferred recipient's retry: the email's dispatch lease is set to the earliest of these. */
  nextAttemptAt: Date | null;
}

/** What one claim produced: the recipients' new states and the events that say so. */
export interface EmailOutcome {
  emailId: string;
  token: string;
  updates: RecipientUpdate[];
  events: EmailEventRecord[];
}

/** A recipient's new status from a report that arrived after delivery (a late bounce). */
export interface LateStatus {
  emailId: string;
  address: string;
  status: RecipientStatus;
}

/** What a late report needs of its email: the event facts and the recipients to match. */
export type ReportedEmail = EmailFacts & { recipients: string[] };

/**
 * A control-plane write to commit with recorded outcomes (the suppression a hard bounce causes),
 * through its own repository in `tx`; `recorded` is each outcome's events that were new. Throwing
 * rolls the outcomes back too. When the email plane has a database of its own, `tx` is a
 * control-plane transaction committed just before the outcomes', and `recorded` is every
 * outcome's events (ClaimsRepository.record): the write must be idempotent.
 */
export type RecordedAlongside = (tx: Transaction, recorded: EmailEventRecord[][]) => Promise<void>;
