import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { affectedRows } from '@herald/database';
import { COUNTERS, type CountedEvent, type Counts, sumByKey, zeroCounts } from './rollup-counts';

const COLUMNS = COUNTERS.join(', ');
const ADD = COUNTERS.map((c) => `${c} = metric_rollups.${c} + EXCLUDED.${c}`).join(', ');
const UNNEST = ['$1::uuid[]', '$2::text[]', '$3::text[]', '$4::timestamptz[]', ...COUNTERS.map((_, i) => `$${i + 5}::int[]`)].join(', ');
/** Sums as numbers (float8: exact far beyond any count); a group always has rows, a total may not. */
const SUMS = COUNTERS.map((c) => `sum(${c})::float8 AS ${c}`).join(', ');
const TOTALS = COUNTERS.map((c) => `coalesce(sum(${c}), 0)::float8 AS ${c}`).join(', ');

/** A range of a team's rollups, optionally of one domain (by name) and one region. */
export interface RollupQuery {
  teamId: string;
  from: Date;
  to: Date;
  granularity: 'hour' | 'day';
  domain: string | null;
  region: string | null;
}

/** The metric_rollups and counted_events tables (see the 1765520000000 migration). */
@Injectable()
export class RollupsRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Adds the events not counted before to their rollups, in one transaction with their ids, so
   * an event is counted once however often it arrives. Answers how many were new.
   */
  async apply(events: CountedEvent[]): Promise<number> {
    const unique = [...new Map(events.map((e) => [e.id, e])).values()];
    if (!unique.length) return 0;
    return this.db.transaction(async (m) => {
      const fresh: { event_id: string }[] = await m.query(
        `INSERT INTO counted_events (event_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING RETURNING event_id`,
        [unique.map((e) => e.id)],
      );
      if (!fresh.length) return 0;
      const ids = new Set(fresh.map((r) => r.event_id));
      const rows = sumByKey(unique.filter((e) => ids.has(e.id)));
      await m.query(
        `INSERT INTO metric_rollups (team_id, domain, region, hour, ${COLUMNS})
         SELECT * FROM unnest(${UNNEST})
         ON CONFLICT (team_id, domain, region, hour) DO UPDATE SET ${ADD}`,
        [
          rows.map((r) => r.key.teamId),
          rows.map((r) => r.key.domain),
          rows.map((r) => r.key.region),
          rows.map((r) => r.key.hour.toISOString()),
          ...COUNTERS.map((c) => rows.map((r) => r.counts[c])),
        ],
      );
      return fresh.length;
    });
  }

  /** The team's sums per hour or per UTC day of the range (buckets with no rows are left out). */
  async series(q: RollupQuery): Promise<{ bucket: Date; counts: Counts }[]> {
    const params: unknown[] = [q.teamId, q.from, q.to];
    const filters = [
      q.domain === null ? '' : ` AND domain = $${params.push(q.domain)}`,
      q.region === null ? '' : ` AND region = $${params.push(q.region)}`,
    ].join('');
    const bucket = q.granularity === 'hour' ? 'hour' : `date_trunc('day', hour, 'UTC')`;
    const rows: (Counts & { bucket: Date })[] = await this.db.query(
      `SELECT ${bucket} AS bucket, ${SUMS} FROM metric_rollups
       WHERE team_id = $1 AND hour >= $2 AND hour < $3${filters}
       GROUP BY 1 ORDER BY 1`,
      params,
    );
    return rows.map(({ bucket, ...counts }) => ({ bucket, counts }));
  }

  /** A domain's sums since `since` (every region): what the guardrail judges. */
  async domainTotals(teamId: string, domain: string, since: Date): Promise<Counts> {
    const [row]: Counts[] = await this.db.query(`SELECT ${TOTALS} FROM metric_rollups WHERE team_id = $1 AND domain = $2 AND hour >= $3`, [
      teamId,
      domain,
      since,
    ]);
    return { ...zeroCounts(), ...row };
  }

  /** Forgets the ids of events counted before `before`: the stream can no longer replay them. */
  async purgeCounted(before: Date, limit: number): Promise<number> {
    const result: unknown = await this.db.query(
      `DELETE FROM counted_events WHERE event_id IN (SELECT event_id FROM counted_events WHERE counted_at < $1 LIMIT $2)`,
      [before, limit],
    );
    return affectedRows(result);
  }
}
