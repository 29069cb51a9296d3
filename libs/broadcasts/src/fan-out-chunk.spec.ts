import { chunkCounts, type FanOutChunk } from './fan-out-chunk';

const chunk: FanOutChunk = {
  recipients: [
    { contactId: 'c2', emailId: 'e2' },
    { contactId: 'c3', emailId: 'e3' },
  ],
  skipped: { unsubscribed: ['c1', 'c4'], topic: ['c5'], suppressed: ['c6'] },
  cursor: 'c6',
};

describe("a fan-out chunk's counts", () => {
  it('counts the ledger rows of its range as recipients, and those left out as skipped', () => {
    expect(chunkCounts(chunk, new Set(['c2', 'c3']))).toEqual({
      recipients: 2,
      skippedUnsubscribed: 2,
      skippedTopic: 1,
      skippedSuppressed: 1,
    });
  });

  it('counts a contact left out now but in the ledger (it got its email from an attempt that died) as a recipient only', () => {
    expect(chunkCounts(chunk, new Set(['c2', 'c3', 'c4', 'c6']))).toEqual({
      recipients: 4,
      skippedUnsubscribed: 1,
      skippedTopic: 1,
      skippedSuppressed: 0,
    });
  });

  it('counts a ledger row of a contact no longer among the members (it left the segment since) as a recipient', () => {
    expect(chunkCounts({ ...chunk, recipients: [], skipped: { unsubscribed: [], topic: [], suppressed: [] } }, new Set(['c0']))).toEqual({
      recipients: 1,
      skippedUnsubscribed: 0,
      skippedTopic: 0,
      skippedSuppressed: 0,
    });
  });
});
