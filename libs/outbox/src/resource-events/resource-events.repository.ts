import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { HeraldEvent } from '@herald/bus';
import { managerOf, type Transaction } from '@herald/database';
import type { PublishEntries } from '../outbox';

/** The transaction of the change whose events are recorded. */
export type ChangeTransaction = Transaction;

interface ResourceEventRow {
  id: string;
  team_id: string;
  type: string;
  data: unknown;
  created_at: Date;
}

const toEvent = (r: ResourceEventRow): HeraldEvent => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at.toISOString(),
  team_id: r.team_id,
  data: r.data,
});

/** resource_events: the outbox of the events of domains and suppressions, per region. */
@Injectable()
export class ResourceEventsRepository {
  constructor(private readonly db: DataSource) {}

  /** Inserts events in the caller's transaction; an id inserted before is skipped. */
  async insert(tx: ChangeTransaction, region: string, events: HeraldEvent[]): Promise<void> {
    if (!events.length) return;
    await managerOf(this.db, tx).query(
      `INSERT INTO resource_events (id, team_id, region, type, data, created_at)
       SELECT u.id, u.team_id, $1, u.type, u.data, u.created_at
         FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::jsonb[], $6::timestamptz[]) AS u(id, team_id, type, data, created_at)
       ON CONFLICT (id) DO NOTHING`,
      [
        region,
        events.map((e) => e.id),
        events.map((e) => e.team_id),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.data ?? null)),
        events.map((e) => e.created_at),
      ],
    );
  }

  /** Marks events as on the stream. */
  async markPublished(ids: string[], m: EntityManager = this.db.manager): Promise<void> {
    if (ids.length) await m.query(`UPDATE resource_events SET published_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /**
   * One relay pass: events of the region still unpublished after `olderThanMs` (their publisher
   * died), oldest first, locked while they are published so that concurrent relays take
   * different ones, and marked published in the same transaction.
   */
  relayDue(region: string, olderThanMs: number, limit: number, publish: PublishEntries<HeraldEvent>): Promise<{ rows: number; published: number }> {
    return this.db.transaction(async (m) => {
      const rows: ResourceEventRow[] = await m.query(
        `SELECT id, team_id, type, data, created_at FROM resource_events
          WHERE region = $1 AND published_at IS NULL AND created_at < now() - make_interval(secs => $2)
          ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [region, olderThanMs / 1000, limit],
      );
      const due = rows.map(toEvent);
      const acked = await publish(due);
      const ids = due.filter((_, i) => acked[i]).map((e) => e.id);
      await this.markPublished(ids, m);
      return { rows: due.length, published: ids.length };
    });
  }
}
