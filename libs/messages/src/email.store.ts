import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@herald/database';
import { ClaimsRepository } from './claims.repository';
import type { ClaimedEmail, EmailOutcome, LateStatus, RecordedAlongside, ReportedEmail } from './delivery-state.types';
import type { EmailRecord, EmailSummary, NewEmail } from './email-record.types';
import type { EmailEventRecord } from './email-events';
import { EmailRepository } from './email.repository';
import { EngagementRepository, type EngagementHit } from './engagement.repository';
import { mimeBodies } from './mime-bodies';
import { MimeUploadsRepository } from './mime-uploads.repository';

/**
 * A write to commit in the insert's transaction (the send path's idempotency record), through
 * its own repository: `tx` is an opaque Transaction, which that repository reads.
 */
export type AlongsideWrite = Parameters<EmailRepository['insert']>[1];

/** A write in the insert's transaction, before the emails, that answers the ids of those still to be written. */
type KeepWrite = Parameters<EmailRepository['insertKept']>[1];

/**
 * The email record's one owner: what accepting (libs/emails) and delivering (libs/delivery)
 * read and write of emails, their recipients, attachments, SMTP messages, dispatches and events.
 * Writes that produce email events record them in the same transaction and return the new ones,
 * for EmailEventOutbox to publish once committed.
 */
@Injectable()
export class EmailStore {
  constructor(
    private readonly emails: EmailRepository,
    private readonly claims: ClaimsRepository,
    private readonly engagement: EngagementRepository,
    private readonly uploads: MimeUploadsRepository,
  ) {}

  /** Stores accepted emails with their dispatch-outbox rows (and `email.scheduled` events); see EmailRepository.insert. */
  insert(emails: NewEmail[], alongside?: AlongsideWrite): Promise<EmailEventRecord[]> {
    return this.emails.insert(emails, alongside);
  }

  /** Stores those of `emails` that `keep` answers, deciding in their transaction (a broadcast's ledger); see EmailRepository.insertKept. */
  insertKept(emails: NewEmail[], keep: KeepWrite): Promise<NewEmail[]> {
    return this.emails.insertKept(emails, keep);
  }

  /**
   * Stores chunk `seq` (from 0) of a large SMTP message's body as it arrives, for `insert` to
   * join into the email's MIME message (NewEmail.raw.upload) when it commits.
   */
  appendMime(uploadId: string, seq: number, data: Buffer): Promise<void> {
    return this.uploads.append(uploadId, seq, data);
  }

  /** Drops the stored chunks of a message that was not accepted. */
  discardMime(uploadId: string): Promise<void> {
    return this.uploads.discard(uploadId);
  }

  /** Drops chunks stored more than `seconds` ago (by a process that died mid-DATA); answers how many. */
  sweepMimeUploads(seconds: number): Promise<number> {
    return this.uploads.sweep(seconds);
  }

  /**
   * The email as stored. The relay stores a message's MIME as sent and does not parse its body
   * (libs/smtp), so the html and text of an email relayed over SMTP are read from it here.
   */
  async get(teamId: string, id: string): Promise<EmailRecord | null> {
    const record = await this.emails.get(teamId, id);
    if (!record || record.source !== 'smtp' || record.html !== null || record.text !== null) return record;
    const mime = await this.emails.mime(teamId, id);
    return mime ? { ...record, ...(await mimeBodies(mime)) } : record;
  }

  list(teamId: string, page: PageRequest): Promise<{ items: EmailSummary[]; hasMore: boolean }> {
    return this.emails.list(teamId, page);
  }

  /** Recipients the team's accepted emails counted since `monthStart` and `dayStart` (the quota's backstop). */
  recipientsAcceptedSince(teamId: string, monthStart: Date, dayStart: Date): Promise<{ month: number; day: number }> {
    return this.emails.recipientsAcceptedSince(teamId, monthStart, dayStart);
  }

  exists(teamId: string, id: string): Promise<boolean> {
    return this.emails.exists(teamId, id);
  }

  /** Moves a scheduled email not dispatched yet; false if it cannot be moved. */
  reschedule(teamId: string, id: string, scheduledAt: Date): Promise<boolean> {
    return this.emails.reschedule(teamId, id, scheduledAt);
  }

  /** Cancels a scheduled email not dispatched yet; false if it cannot be canceled. */
  cancel(teamId: string, id: string): Promise<boolean> {
    return this.emails.cancel(teamId, id);
  }

  /** Claims the due recipients of these emails for a worker; `onClaim` gives the events to record with the claim. */
  claim(
    emailIds: string[],
    claimSeconds: number,
    onClaim: (emails: ClaimedEmail[]) => EmailEventRecord[],
  ): Promise<{ claimed: Map<string, ClaimedEmail>; events: EmailEventRecord[] }> {
    return this.claims.claim(emailIds, claimSeconds, onClaim);
  }

  /** Extends the live claims of these tokens and their emails' leases; returns the emails each token still holds. */
  renewClaims(tokens: string[], claimSeconds: number): Promise<{ emailId: string; token: string }[]> {
    return this.claims.renewClaims(tokens, claimSeconds);
  }

  /**
   * Puts off emails a worker turned away before claiming them: each one's lease comes due after
   * its delay, when the reconciler dispatches it again (`called`: back into a place kept for it).
   * Emails with nothing left to send are left alone.
   */
  postpone(items: { emailId: string; delayMs: number; called: boolean }[]): Promise<void> {
    return this.claims.postpone(items);
  }

  /**
   * Records claimed outcomes: recipients' states, each email's dispatch (done, or its lease until
   * the next retry is due) and last_event, and `alongside` in the same transaction. Answers, per
   * outcome, its events that were new.
   */
  record(outcomes: EmailOutcome[], alongside?: RecordedAlongside): Promise<EmailEventRecord[][]> {
    return this.claims.record(outcomes, alongside);
  }

  /** What a report arriving after delivery needs of its email; null if unknown. */
  emailForReport(emailId: string): Promise<ReportedEmail | null> {
    return this.claims.emailForReport(emailId);
  }

  /** Records events outside a claim (late bounces, complaints); answers the new ones. */
  recordLate(events: EmailEventRecord[], statuses: LateStatus[]): Promise<EmailEventRecord[]> {
    return this.claims.recordLate(events, statuses);
  }

  /** Records opens and clicks (tracking) as email events; answers the new ones (for the outbox). */
  async recordEngagement(hits: EngagementHit[]): Promise<EmailEventRecord[]> {
    return (await this.engagement.record(hits)).fresh;
  }

  /**
   * Records opens and clicks whose events the caller publishes itself before it lets go of the
   * hits (the tracking stream redelivers them otherwise): stored as published, no outbox relay.
   * Answers every recorded hit's event as stored, those recorded before included.
   */
  async recordEngagementPublished(hits: EngagementHit[]): Promise<EmailEventRecord[]> {
    return (await this.engagement.record(hits, true)).events;
  }
}
