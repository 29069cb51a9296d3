/*
 * The Metrics page's time window. Buckets are UTC hours or days; the one holding `now` is still
 * filling up, so its count is real but partial: drawn like the others it reads as a drop (a
 * quarter past the hour shows a quarter of an hour's sending), and a window fixed when the page
 * opened never showed the hours that began afterwards (the page refetches every minute).
 */

export const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The range [from, to) of `ms` ending with the hour `now` is in (to: the next whole hour, never `now` itself). */
export function statsWindow(now: number, ms: number): { from: number; to: number } {
  const to = (Math.floor(now / HOUR) + 1) * HOUR;
  return { from: to - ms, to };
}

/** The index of the bucket `now` falls in (still filling up), or -1 when the range is over. */
export function partialBucket(timestamps: string[], granularity: 'hour' | 'day', now: number): number {
  const step = granularity === 'hour' ? HOUR : DAY;
  return timestamps.findIndex((t) => {
    const start = Date.parse(t);
    return start <= now && now < start + step;
  });
}

/**
 * A series cut at the partial bucket: `complete` without it, and `partial` with only it and the
 * bucket before (drawn dashed, so the line into the bucket in progress looks unfinished).
 */
export function splitAtPartial<T extends number | null>(values: T[], index: number): { complete: (T | null)[]; partial: (T | null)[] | null } {
  if (index < 0) return { complete: values, partial: null };
  return {
    complete: values.map((v, i) => (i === index ? null : v)),
    partial: values.map((v, i) => (i === index || i === index - 1 ? v : null)),
  };
}
