import { dayBound, observedText, statusLabel, toneOf, usagePercent } from './format';

describe('status badges', () => {
  it('colours a status by what it means and always has words for it', () => {
    expect(toneOf('verified')).toBe('green');
    expect(toneOf('DELIVERED')).toBe('green');
    expect(toneOf('bounced')).toBe('red');
    expect(toneOf('delivery_delayed')).toBe('orange');
    expect(toneOf('something_new')).toBe('gray');
    expect(toneOf(undefined)).toBe('gray');
    expect(statusLabel('delivery_delayed')).toBe('delivery delayed');
    expect(statusLabel(null)).toBe('unknown');
  });
});

describe('usagePercent', () => {
  it('is the share of the quota, capped at 100, and 0 without a quota', () => {
    expect(usagePercent(250, 1000)).toBe(25);
    expect(usagePercent(1, 3)).toBe(33.3);
    expect(usagePercent(5000, 1000)).toBe(100);
    expect(usagePercent(5, null)).toBe(0);
    expect(usagePercent(5, 0)).toBe(0);
  });
});

describe('observedText', () => {
  it('says what DNS answered, nothing yet, or no record', () => {
    expect(observedText(['v=spf1 include:herald.test ~all'])).toBe('v=spf1 include:herald.test ~all');
    expect(observedText(['10 mx1.herald.test', '20 mx2.herald.test'])).toBe('10 mx1.herald.test · 20 mx2.herald.test');
    expect(observedText([])).toBe('no record');
    expect(observedText(null)).toBe('nothing yet');
  });
});

describe('dayBound', () => {
  it("turns a date input's day into the instants that start and end it, in the local zone", () => {
    const start = new Date(dayBound('2026-03-01')!);
    const end = new Date(dayBound('2026-03-01', true)!);
    expect([start.getFullYear(), start.getMonth(), start.getDate(), start.getHours()]).toEqual([2026, 2, 1, 0]);
    expect([end.getFullYear(), end.getMonth(), end.getDate(), end.getHours()]).toEqual([2026, 2, 2, 0]);
  });

  it('ignores an empty or malformed day', () => {
    expect(dayBound('')).toBeUndefined();
    expect(dayBound('2026-3-1')).toBeUndefined();
    expect(dayBound('2026-13-45')).toBeUndefined();
  });
});
