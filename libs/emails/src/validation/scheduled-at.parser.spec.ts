import { parseScheduledAt } from './scheduled-at.parser';

const NOW = new Date('2026-08-05T10:00:00.000Z');
const parse = (value: unknown, maxDays = 30) => parseScheduledAt(value, NOW, maxDays);
const iso = (value: unknown): string | null => {
  const r = parse(value);
  return r.ok ? r.value.toISOString() : null;
};

describe('parseScheduledAt', () => {
  it.each([
    ['2026-08-05T11:52:01.858Z', '2026-08-05T11:52:01.858Z'],
    ['2026-08-05t11:52:01z', '2026-08-05T11:52:01.000Z'],
    ['2026-08-05T13:52+02:00', '2026-08-05T11:52:00.000Z'],
    ['2026-08-05T06:52:00-0500', '2026-08-05T11:52:00.000Z'],
    ['2026-08-05T11:52:00.123456789Z', '2026-08-05T11:52:00.123Z'],
    ['2026-08-05 11:52:01.858000+00', '2026-08-05T11:52:01.858Z'],
    ['2026-08-05T11:52:00', '2026-08-05T11:52:00.000Z'],
    ['2026-08-06', '2026-08-06T00:00:00.000Z'],
  ])('reads ISO 8601 %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    ['now', '2026-08-05T10:00:00.000Z'],
    ['  NOW ', '2026-08-05T10:00:00.000Z'],
    ['in 1 min', '2026-08-05T10:01:00.000Z'],
    ['in 1min', '2026-08-05T10:01:00.000Z'],
    ['in 5 minutes', '2026-08-05T10:05:00.000Z'],
    ['in 30 seconds', '2026-08-05T10:00:30.000Z'],
    ['in 2 hours', '2026-08-05T12:00:00.000Z'],
    ['in an hour', '2026-08-05T11:00:00.000Z'],
    ['In A Day', '2026-08-06T10:00:00.000Z'],
    ['in 3 days', '2026-08-08T10:00:00.000Z'],
    ['in 1 week', '2026-08-12T10:00:00.000Z'],
    ['in 30 days', '2026-09-04T10:00:00.000Z'],
    ['tomorrow at 9am', '2026-08-06T09:00:00.000Z'],
    ['tomorrow at 9:30 am', '2026-08-06T09:30:00.000Z'],
    ['tomorrow 12am', '2026-08-06T00:00:00.000Z'],
    ['tomorrow at 12pm', '2026-08-06T12:00:00.000Z'],
    ['tomorrow at 14:30', '2026-08-06T14:30:00.000Z'],
    ['tomorrow at noon', '2026-08-06T12:00:00.000Z'],
    ['tomorrow at midnight', '2026-08-06T00:00:00.000Z'],
    ['today at 5pm', '2026-08-05T17:00:00.000Z'],
  ])('reads natural language %j', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it('tolerates a minute of clock skew for "now"-ish dates', () => {
    expect(iso('2026-08-05T09:59:30Z')).toBe('2026-08-05T09:59:30.000Z');
  });

  it.each([
    [''],
    ['soon'],
    ['tomorrow'],
    ['next friday'],
    ['in minutes'],
    ['in 5 fortnights'],
    ['in 1 constructor'],
    ['in amin'],
    ['tomorrow at 13pm'],
    ['tomorrow at 0am'],
    ['tomorrow at 24:00'],
    ['tomorrow at 9:60'],
    ['2026-02-30T10:00:00Z'],
    ['2026-13-01T10:00:00Z'],
    ['2026-08-05T25:00:00Z'],
    ['2026-08-05T10:00:00+24:00'],
    ['2026-08-05T10:00:00+0'],
    ['08/05/2026'],
    ['1786000000'],
    [1786000000],
    [{}],
    [true],
  ])('rejects %j as unreadable, naming `scheduled_at`', (input) => {
    const r = parse(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('validation_error');
      expect(r.error.message).toMatch(/^Invalid `scheduled_at` field\. Use an ISO 8601 date/);
    }
  });

  it.each([['2026-08-05T09:58:59Z'], ['today at 9am'], ['2025-01-01']])('rejects %j as in the past', (input) => {
    const r = parse(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('validation_error');
      expect(r.error.message).toBe('Invalid `scheduled_at` field. The date must be in the future.');
    }
  });

  it('rejects dates beyond the scheduling window, naming the limit', () => {
    for (const input of ['in 31 days', '2026-09-04T10:00:00.001Z', 'in 5 weeks']) {
      const r = parse(input);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.message).toBe('Invalid `scheduled_at` field. Emails can be scheduled at most 30 days in advance.');
    }
    const short = parse('in 2 days', 1);
    expect(short.ok || short.error.message).toBe('Invalid `scheduled_at` field. Emails can be scheduled at most 1 day in advance.');
  });
});
