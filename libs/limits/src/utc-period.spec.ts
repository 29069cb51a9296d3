import { secondsUntil, utcDay, utcMonth } from './utc-period';

describe('UTC periods', () => {
  it('cuts days at 00:00 UTC whatever the local offset', () => {
    const day = utcDay(new Date('2026-04-03T23:59:59.999-00:00'));
    expect(day.label).toBe('2026-04-03');
    expect(day.end.toISOString()).toBe('2026-04-04T00:00:00.000Z');
    expect(utcDay(new Date('2026-04-04T01:30:00+02:00')).label).toBe('2026-04-03');
  });

  it('rolls months and years over', () => {
    expect(utcMonth(new Date('2026-02-28T12:00:00Z')).end.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    const december = utcMonth(new Date('2026-12-31T23:00:00Z'));
    expect(december.label).toBe('2026-12');
    expect(december.end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(utcDay(new Date('2028-02-28T10:00:00Z')).end.toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('counts whole seconds to the reset, at least one', () => {
    const now = new Date('2026-04-03T23:59:58.200Z');
    expect(secondsUntil(utcDay(now).end, now)).toBe(2);
    expect(secondsUntil(now, now)).toBe(1);
  });

  it('refuses an invalid date', () => {
    expect(() => utcDay(new Date('nope'))).toThrow(RangeError);
  });
});
