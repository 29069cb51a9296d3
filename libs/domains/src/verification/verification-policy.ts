import { Domain, DomainRecord, DomainStatus, RecordStatus } from '../domain.types';
import { AbsentStatus } from './record-checker';

/** The facts a domain's new status is decided from. */
export interface StatusFacts {
  previous: DomainStatus;
  /** The last time all required records were seen verified; null if never. */
  lastVerifiedAt: Date | null;
  /** When verification was requested (the window counts from here), or when the domain was added. */
  windowStart: Date;
  windowMs: number;
  now: Date;
  /** The statuses of the records that must verify (DKIM and SPF). */
  required: RecordStatus[];
}

const MIN_PENDING_DELAY_MS = 30_000;
const MAX_PENDING_DELAY_MS = 5 * 60_000;
/** A waiting domain is checked again after a fifth of the time it has waited so far (clamped). */
const PENDING_BACKOFF_DIVISOR = 5;

const elapsed = (from: Date, now: Date) => now.getTime() - from.getTime();

export function windowStart(domain: Pick<Domain, 'verificationStartedAt' | 'createdAt'>): Date {
  return domain.verificationStartedAt ?? domain.createdAt;
}

/**
 * How to report a record DNS does not have: `pending` while the customer may still be
 * publishing it (a never-verified domain inside its window; or a record that is not required and
 * was never seen, such as the DKIM record of a key being rotated in), `failed` when something is
 * lost (a required record of a domain verified before, a record seen at the previous check) or
 * overdue (a required record after the window).
 */
export function absentStatus(
  facts: Pick<StatusFacts, 'lastVerifiedAt' | 'windowStart' | 'windowMs' | 'now'>,
  record: Pick<DomainRecord, 'required' | 'status'>,
): AbsentStatus {
  if (facts.lastVerifiedAt === null && elapsed(facts.windowStart, facts.now) <= facts.windowMs) return 'pending';
  if (record.required) return 'failed';
  return record.status === 'verified' || record.status === 'temporary_failure' ? 'failed' : 'pending';
}

/**
 * The domain's status after a check:
 * - verified: every required record verified;
 * - failed: a required record failed on a domain that was verified before, or whose window is over;
 *   a domain whose records were never all seen within the window; a domain already failed after
 *   being verified, until its records verify again (a DNS hiccup does not revive it);
 * - temporary_failure: a verified (or temporarily failing) domain whose required records could
 *   not be checked (timeout, SERVFAIL), none of them definitely missing, for up to the window
 *   since it was last seen verified; then failed;
 * - pending: otherwise (never verified, window open), even if a record is wrong for now.
 */
export function decideStatus(facts: StatusFacts): DomainStatus {
  const { required, previous, lastVerifiedAt, now, windowMs } = facts;
  const windowOver = elapsed(facts.windowStart, now) > windowMs;
  if (required.length && required.every((s) => s === 'verified')) return 'verified';
  if (required.includes('failed')) return lastVerifiedAt !== null || windowOver ? 'failed' : 'pending';
  const wasSending = previous === 'verified' || previous === 'temporary_failure';
  if (wasSending && lastVerifiedAt !== null && required.includes('temporary_failure')) {
    return elapsed(lastVerifiedAt, now) > windowMs ? 'failed' : 'temporary_failure';
  }
  if (previous === 'failed' && lastVerifiedAt !== null) return 'failed';
  return windowOver ? 'failed' : 'pending';
}

/**
 * When to check again: verified and failed domains at the recheck interval (a failed domain is
 * still checked, so a fix is noticed); a waiting one soon, backing off from 30 s to 5 min as it
 * keeps waiting, never later than the interval.
 */
export function nextCheckDelayMs(status: DomainStatus, waitingSince: Date, now: Date, intervalMs: number): number {
  if (status === 'verified' || status === 'failed') return intervalMs;
  const backoff = Math.min(MAX_PENDING_DELAY_MS, Math.max(MIN_PENDING_DELAY_MS, elapsed(waitingSince, now) / PENDING_BACKOFF_DIVISOR));
  return Math.min(intervalMs, Math.round(backoff));
}
