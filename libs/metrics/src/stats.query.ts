import { z } from 'zod';
import { HeraldError, isUuid } from '@herald/core';
import { fail, mustBe, parseOrThrow } from '@herald/http';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Most buckets one request answers: 93 days of hours, 400 days of days. */
const MAX_RANGE_MS = { hour: 93 * DAY_MS, day: 400 * DAY_MS } as const;
const DEFAULT_RANGE_MS = 7 * DAY_MS;

export type Granularity = 'hour' | 'day';

/** GET /stats, validated: a range aligned to whole buckets (`to` exclusive) and the filters. */
export interface StatsQuery {
  from: Date;
  to: Date;
  granularity: Granularity;
  domainId: string | null;
  region: string | null;
}

const instant = (field: string) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const at = new Date(value);
      return /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(at.getTime()) ? at : fail(ctx, mustBe(field, 'an ISO 8601 date or date-time'));
    });

const statsQuerySchema = (regions: readonly string[]) =>
  z.object({
    from: instant('from'),
    to: instant('to'),
    granularity: z.enum(['hour', 'day'], { error: mustBe('granularity', '`hour` or `day`') }).default('hour'),
    domain_id: z
      .string()
      .optional()
      .refine((v) => v === undefined || isUuid(v), { error: mustBe('domain_id', 'a domain id (a UUID)') }),
    region: z
      .string()
      .optional()
      .refine((v) => v === undefined || regions.includes(v), { error: mustBe('region', `one of ${regions.join(', ')}`) }),
  });

const floorTo = (at: Date, unit: number) => new Date(Math.floor(at.getTime() / unit) * unit);
const ceilTo = (at: Date, unit: number) => new Date(Math.ceil(at.getTime() / unit) * unit);

/**
 * `from` defaults to 7 days before `to`, `to` to now; both widen to whole buckets (UTC hours or
 * days). Throws 422 `validation_error` naming the field.
 */
export function validateStatsQuery(query: unknown, regions: readonly string[], now = new Date()): StatsQuery {
  const q = parseOrThrow(statsQuerySchema(regions), query ?? {});
  const unit = q.granularity === 'hour' ? HOUR_MS : DAY_MS;
  const to = ceilTo(q.to ?? now, unit);
  const from = floorTo(q.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS), unit);
  if (from >= to) throw new HeraldError('validation_error', 'The `from` date must be before `to`.');
  if (to.getTime() - from.getTime() > MAX_RANGE_MS[q.granularity]) {
    const days = MAX_RANGE_MS[q.granularity] / DAY_MS;
    throw new HeraldError('validation_error', `The range from \`from\` to \`to\` must be at most ${days} days at \`${q.granularity}\` granularity.`);
  }
  return { from, to, granularity: q.granularity, domainId: q.domain_id ?? null, region: q.region ?? null };
}

export const bucketMs = (granularity: Granularity): number => (granularity === 'hour' ? HOUR_MS : DAY_MS);
