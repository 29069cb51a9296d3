import { z } from 'zod';
import { COUNTERS, type Counts } from './rollup-counts';
import { bounceRate, complaintRate, deliveryRate } from './guardrail';

/*
 * GET /stats (a Herald extension, the name Mailgun and SendGrid use): the team's counts per
 * bucket, and the range's totals with the rates the bulk-sender guidance is written in.
 */

const DESCRIPTIONS: Record<(typeof COUNTERS)[number], string> = {
  sent: 'Recipients Herald started sending to (`email.sent`).',
  delivered: 'Recipients whose server accepted the message.',
  delivery_delayed: 'Recipients whose server deferred it (each delay once).',
  bounced_hard: 'Permanent bounces.',
  bounced_soft: 'Transient bounces (e.g. retries exhausted, mailbox full).',
  complained: 'Spam complaints (feedback loops).',
  suppressed: 'Recipients not sent to: on the suppression list.',
  failed: 'Recipients Herald could not send to (e.g. no valid DKIM key).',
  opened_human: 'Opens by people.',
  opened_human_unique: 'First opens by people, once per recipient.',
  opened_machine: 'Opens by machines (privacy proxies, scanners), flagged rather than dropped.',
  opened_machine_unique: 'First machine opens, once per recipient.',
  clicked_human: 'Clicks by people.',
  clicked_human_unique: 'First clicks of each link by people, once per recipient.',
  clicked_machine: 'Clicks by link scanners.',
  clicked_machine_unique: 'First scanner clicks of each link, once per recipient.',
};

const countsShape = Object.fromEntries(COUNTERS.map((c) => [c, z.int().min(0).meta({ description: DESCRIPTIONS[c] })])) as Record<
  (typeof COUNTERS)[number],
  z.ZodInt
>;

const rate = (description: string) => z.number().nullable().meta({ description, example: 0.012 });

export const statsBucketSchema = z.object({
  timestamp: z.iso.datetime().meta({ description: 'The start of the bucket (UTC, ISO 8601).', example: '2026-11-26T14:00:00.000Z' }),
  ...countsShape,
});

export const statsSchema = z
  .object({
    object: z.literal('stats'),
    from: z.iso.datetime().meta({ description: 'The start of the first bucket.', example: '2026-11-19T15:00:00.000Z' }),
    to: z.iso.datetime().meta({ description: 'The end of the last bucket (exclusive).', example: '2026-11-26T15:00:00.000Z' }),
    granularity: z.enum(['hour', 'day']),
    domain_id: z.uuid().nullable(),
    region: z.string().nullable(),
    totals: z.object({
      ...countsShape,
      delivery_rate: rate('delivered / sent; null when nothing was sent.'),
      bounce_rate: rate('(bounced_hard + bounced_soft) / sent. The guardrail pauses a domain above 4% over 24 hours.'),
      complaint_rate: rate('complained / delivered, as Gmail and Yahoo measure it. Keep it under 0.1%; the guardrail pauses above 0.3%.'),
    }),
    data: z.array(statsBucketSchema).meta({
      description:
        'Every bucket of the range in order, zeros included. The bucket holding the current time is still filling up: its counts are those so far.',
    }),
  })
  .meta({ description: 'Counts are recipients, from the events of every region (or the one filtered), by the time each event happened.' });

export type StatsBody = z.infer<typeof statsSchema>;

const rounded = (rate: number | null) => (rate === null ? null : Math.round(rate * 1e6) / 1e6);

export function presentStats(
  range: Pick<StatsBody, 'from' | 'to' | 'granularity' | 'domain_id' | 'region'>,
  buckets: { start: Date; counts: Counts }[],
  totals: Counts,
): StatsBody {
  return {
    object: 'stats',
    ...range,
    totals: {
      ...totals,
      delivery_rate: rounded(deliveryRate(totals)),
      bounce_rate: rounded(bounceRate(totals)),
      complaint_rate: rounded(complaintRate(totals)),
    },
    data: buckets.map((b) => ({ timestamp: b.start.toISOString(), ...b.counts })),
  };
}
