import { RecordStatus } from '../domain.types';
import { absentStatus, decideStatus, nextCheckDelayMs, StatusFacts } from './verification-policy';

const HOUR = 3600_000;
const start = new Date('2026-01-01T00:00:00Z');
const at = (hours: number) => new Date(start.getTime() + hours * HOUR);
const facts = (over: Partial<StatusFacts> & { required: RecordStatus[] }): StatusFacts => ({
  previous: 'pending',
  lastVerifiedAt: null,
  windowStart: start,
  windowMs: 72 * HOUR,
  now: at(1),
  ...over,
});

describe('verification policy', () => {
  it('verifies a domain when every required record verifies, and never one without required records', () => {
    expect(decideStatus(facts({ required: ['verified', 'verified', 'verified'] }))).toBe('verified');
    expect(decideStatus(facts({ required: [] }))).toBe('pending');
  });

  it('keeps a never-verified domain pending inside its window, even with a wrong record, and fails it after', () => {
    expect(decideStatus(facts({ required: ['verified', 'pending'] }))).toBe('pending');
    expect(decideStatus(facts({ required: ['failed', 'verified'] }))).toBe('pending');
    expect(decideStatus(facts({ required: ['temporary_failure'] }))).toBe('pending');
    expect(decideStatus(facts({ required: ['failed'], now: at(73) }))).toBe('failed');
    expect(decideStatus(facts({ required: ['temporary_failure'], now: at(73) }))).toBe('failed');
  });

  it('fails a verified domain that lost a required record', () => {
    expect(decideStatus(facts({ previous: 'verified', lastVerifiedAt: at(2), now: at(3), required: ['verified', 'failed'] }))).toBe('failed');
  });

  it('keeps a verified domain sending through a DNS failure for the window since it was last seen verified', () => {
    const verified = { previous: 'verified' as const, lastVerifiedAt: at(100), required: ['verified', 'temporary_failure'] as RecordStatus[] };
    expect(decideStatus(facts({ ...verified, now: at(101) }))).toBe('temporary_failure');
    expect(decideStatus(facts({ ...verified, previous: 'temporary_failure', now: at(171) }))).toBe('temporary_failure');
    expect(decideStatus(facts({ ...verified, previous: 'temporary_failure', now: at(173) }))).toBe('failed');
  });

  it('does not revive a failed domain on a DNS failure', () => {
    expect(decideStatus(facts({ previous: 'failed', lastVerifiedAt: at(2), now: at(10), required: ['temporary_failure'] }))).toBe('failed');
  });

  it('reports an absent record as pending while it may still be published, failed when lost or overdue', () => {
    const window = { windowStart: start, windowMs: 72 * HOUR };
    const required = { required: true, status: 'not_started' as const };
    const optionalNew = { required: false, status: 'not_started' as const };
    const optionalSeen = { required: false, status: 'verified' as const };
    expect(absentStatus({ ...window, lastVerifiedAt: null, now: at(71) }, required)).toBe('pending');
    expect(absentStatus({ ...window, lastVerifiedAt: null, now: at(71) }, optionalSeen)).toBe('pending');
    expect(absentStatus({ ...window, lastVerifiedAt: null, now: at(73) }, required)).toBe('failed');
    expect(absentStatus({ ...window, lastVerifiedAt: at(1), now: at(2) }, required)).toBe('failed');
    expect(absentStatus({ ...window, lastVerifiedAt: at(1), now: at(2) }, optionalNew)).toBe('pending');
    expect(absentStatus({ ...window, lastVerifiedAt: at(1), now: at(2) }, optionalSeen)).toBe('failed');
  });

  it('rechecks waiting domains soon, backing off to 5 minutes, and the others at the interval', () => {
    const interval = 6 * HOUR;
    expect(nextCheckDelayMs('verified', start, at(1), interval)).toBe(interval);
    expect(nextCheckDelayMs('failed', start, at(100), interval)).toBe(interval);
    expect(nextCheckDelayMs('pending', start, start, interval)).toBe(30_000);
    expect(nextCheckDelayMs('pending', start, new Date(start.getTime() + 5 * 60_000), interval)).toBe(60_000);
    expect(nextCheckDelayMs('temporary_failure', start, at(5), interval)).toBe(5 * 60_000);
    expect(nextCheckDelayMs('pending', start, at(5), 2000)).toBe(2000);
  });
});
