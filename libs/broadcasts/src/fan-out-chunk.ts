import type { FanOutCounts } from './broadcast.types';

/** One chunk of a fan-out: who gets an email (by email id), who is left out and why, and where it ends. */
export interface FanOutChunk {
  recipients: { contactId: string; emailId: string }[];
  /** The contacts left out, by reason: unsubscribed, not subscribed to the topic, suppressed. */
  skipped: { unsubscribed: string[]; topic: string[]; suppressed: string[] };
  /** The last contact of the chunk, sent or skipped: where the next chunk starts. */
  cursor: string;
}

/**
 * What a chunk adds to its broadcast's counts, derived from the ledger rather than from what this
 * attempt wrote. `ledgered` holds every contact of the chunk's range (after the cursor it started
 * from, up to its own) with a ledger row, read once the chunk's emails committed: each got exactly
 * one email, from this attempt or from one that wrote the range and died before moving the cursor
 * (or raced this one). So a contact left out now but already in the ledger (it unsubscribed since)
 * counts as a recipient, not as skipped, and a rerun chunk adds what a single run would have. The
 * cursor's compare-and-set then adds each range's counts once.
 */
export function chunkCounts(chunk: FanOutChunk, ledgered: ReadonlySet<string>): FanOutCounts {
  const leftOut = (contacts: string[]) => contacts.filter((contact) => !ledgered.has(contact)).length;
  return {
    recipients: ledgered.size,
    skippedUnsubscribed: leftOut(chunk.skipped.unsubscribed),
    skippedTopic: leftOut(chunk.skipped.topic),
    skippedSuppressed: leftOut(chunk.skipped.suppressed),
  };
}
