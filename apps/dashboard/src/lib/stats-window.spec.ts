import { HOUR, partialBucket, splitAtPartial, statsWindow } from './stats-window';

describe('the Metrics window', () => {
  const at = (iso: string) => Date.parse(iso);

  it('ends with the hour in progress, also exactly on the hour', () => {
    expect(statsWindow(at('2026-11-26T20:15:00Z'), 24 * HOUR)).toEqual({ from: at('2026-11-25T21:00:00Z'), to: at('2026-11-26T21:00:00Z') });
    expect(statsWindow(at('2026-11-26T20:00:00Z'), 24 * HOUR).to).toBe(at('2026-11-26T21:00:00Z'));
  });

  it('finds the bucket still filling up, by hour and by day, and none once the range is over', () => {
    const hours = ['2026-11-26T18:00:00.000Z', '2026-11-26T19:00:00.000Z', '2026-11-26T20:00:00.000Z'];
    expect(partialBucket(hours, 'hour', at('2026-11-26T20:15:00Z'))).toBe(2);
    expect(partialBucket(hours, 'hour', at('2026-11-26T21:00:00Z'))).toBe(-1);
    expect(partialBucket(['2026-11-25T00:00:00.000Z', '2026-11-26T00:00:00.000Z'], 'day', at('2026-11-26T20:15:00Z'))).toBe(1);
  });

  it('keeps the partial bucket’s real count, drawn apart from the complete ones', () => {
    expect(splitAtPartial([5, 7, 2], 2)).toEqual({ complete: [5, 7, null], partial: [null, 7, 2] });
    expect(splitAtPartial([3], 0)).toEqual({ complete: [null], partial: [3] });
    expect(splitAtPartial([5, 7], -1)).toEqual({ complete: [5, 7], partial: null });
  });
});
