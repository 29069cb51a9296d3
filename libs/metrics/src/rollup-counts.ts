/**
 * What one event adds to its hour's rollup. Counts are recipients (an event's `data.to`), so
 * `sent`, `delivered` and `bounced_*` share a unit and their ratios are rates.
 */
export const COUNTERS = [
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced_hard',
  'bounced_soft',
  'complained',
  'suppressed',
  'failed',
  'opened_human',
  'opened_human_unique',
  'opened_machine',
  'opened_machine_unique',
  'clicked_human',
  'clicked_human_unique',
  'clicked_machine',
  'clicked_machine_unique',
] as const;

export type Counter = (typeof COUNTERS)[number];
export type Counts = Record<Counter, number>;

export const zeroCounts = (): Counts => Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counts;

/** Where an event's counts go: the team, the `from` domain, the region and the UTC hour. */
export interface RollupKey {
  teamId: string;
  domain: string;
  region: string;
  /** The hour of the event's `created_at` (when the fact happened, not when it was counted). */
  hour: Date;
}

/** An event the rollups count: its id (for the dedup) and what it adds where. */
export interface CountedEvent {
  id: string;
  key: RollupKey;
  counts: Partial<Counts>;
}

/** The event as the events stream carries it. */
export interface StreamedEvent {
  id: string;
  type: string;
  created_at: string;
  team_id: string;
  data: unknown;
}

/** The same expression as FROM_DOMAIN_SQL (libs/messages): the domain of `Name <a@b>` or `a@b`. */
const FROM_DOMAIN = /@([^@<>\s]+)>?\s*$/;

export const fromDomainOf = (from: unknown): string | null =>
  typeof from === 'string' ? (FROM_DOMAIN.exec(from)?.[1]?.toLowerCase() ?? null) : null;

const HOUR_MS = 3_600_000;
export const hourOf = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

interface EventData {
  from?: unknown;
  to?: unknown;
  bounce?: { type?: unknown };
  tracking?: { machine?: unknown; unique?: unknown };
}

/**
 * The counts of an email event, or null for an event the rollups do not count (domain events,
 * `email.scheduled`, an event without a `from` domain or a valid time).
 */
export function countEvent(event: StreamedEvent, region: string): CountedEvent | null {
  const data = (event.data ?? {}) as EventData;
  const domain = fromDomainOf(data.from);
  const at = new Date(event.created_at);
  if (!domain || Number.isNaN(at.getTime())) return null;
  const recipients = Array.isArray(data.to) && data.to.length ? data.to.length : 1;
  const counts = countsOf(event.type, data, recipients);
  if (!counts) return null;
  return { id: event.id, key: { teamId: event.team_id, domain, region, hour: hourOf(at) }, counts };
}

function countsOf(type: string, data: EventData, n: number): Partial<Counts> | null {
  switch (type) {
    case 'email.sent':
      return { sent: n };
    case 'email.delivered':
      return { delivered: n };
    case 'email.delivery_delayed':
      return { delivery_delayed: n };
    case 'email.bounced':
      // Resend's taxonomy: Permanent is a hard bounce; Transient (and Undetermined) soft.
      return data.bounce?.type === 'Permanent' ? { bounced_hard: n } : { bounced_soft: n };
    case 'email.complained':
      return { complained: n };
    case 'email.suppressed':
      return { suppressed: n };
    case 'email.failed':
      return { failed: n };
    case 'email.opened':
    case 'email.clicked': {
      const kind = type === 'email.opened' ? 'opened' : 'clicked';
      const who = data.tracking?.machine === true ? 'machine' : 'human';
      const unique = data.tracking?.unique === true;
      return { [`${kind}_${who}`]: n, ...(unique && { [`${kind}_${who}_unique`]: n }) };
    }
    default:
      return null;
  }
}

/** One row's worth per key: a batch's events summed by team, domain, region and hour. */
export function sumByKey(events: CountedEvent[]): { key: RollupKey; counts: Counts }[] {
  const rows = new Map<string, { key: RollupKey; counts: Counts }>();
  for (const e of events) {
    const id = `${e.key.teamId}|${e.key.domain}|${e.key.region}|${e.key.hour.getTime()}`;
    let row = rows.get(id);
    if (!row) rows.set(id, (row = { key: e.key, counts: zeroCounts() }));
    for (const [counter, n] of Object.entries(e.counts) as [Counter, number][]) row.counts[counter] += n;
  }
  // A fixed order of row locks: two batches upserting the same rows cannot deadlock.
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}
