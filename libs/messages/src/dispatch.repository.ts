import { Injectable } from '@nestjs/common';
import { MAX_DOMAIN_HINTS } from '@herald/bus';
import { addressDomain } from '@herald/core';
import { EmailPlanes, NamedStatement } from '@herald/database';
import type { PublishEntries } from '@herald/outbox';

/** An email the reconciler is to publish, with the generation its command carries (none for a first publish). */
export interface DueDispatch {
  emailId: string;
  teamId: string;
  region: string;
  generation?: number;
  /** Its recipients' domains, the command's hint (see sendCommandSchema); none past MAX_DOMAIN_HINTS. */
  domains?: string[];
  /** Called back by the worker that postponed it: a place is kept for it. */
  called?: true;
}

/** The hint of an email to these addresses. */
export function domainsOf(addresses: Iterable<string>): string[] | undefined {
  const domains = new Set<string>();
  for (const address of addresses) {
    domains.add(addressDomain(address));
    if (domains.size > MAX_DOMAIN_HINTS) return undefined;
  }
  return [...domains];
}

/** Its recipients' domains (after the last @), from email_recipients r of email e. */
const RECIPIENT_DOMAINS = `array(SELECT DISTINCT lower(substring(r.address from '[^@]*$')) FROM email_recipients r WHERE r.email_id = e.id`;

/** Publishes due emails; true where the stream acknowledged the email's command. */
type PublishDue = PublishEntries<DueDispatch>;

interface DueRow {
  id: string;
  team_id: string;
  region: string;
  dispatch_count: number;
  domains: string[] | null;
  dispatch_called?: boolean;
}

/** Outbox rows done with (the send path confirms every request's this way). */
const DELETE_DISPATCHES = NamedStatement.of('delete_email_dispatches', `DELETE FROM email_dispatches WHERE id = ANY($1::uuid[])`);

/**
 * The dispatch state of emails: the dispatch outbox (email_dispatches) and the workers' leases
 * (emails.dispatch_at). The relay's passes hold their rows locked (SKIP LOCKED) while they
 * publish, so `publish` runs inside the transaction that then records what it published.
 */
@Injectable()
export class DispatchRepository {
  constructor(private readonly planes: EmailPlanes) {}

  /** The send path's publishes were acknowledged: these outbox rows are done, each in its region's email plane (its id names it). */
  async confirm(ids: string[]): Promise<void> {
    // Narrow outbox rows, gone once published. The reconciler locks rows with SKIP LOCKED and
    // waits for nothing, so this statement cannot deadlock with it; reschedule and cancel touch
    // only scheduled emails' rows, which are never dispatched from here.
    for (const group of await this.planes.byId(ids)) await DELETE_DISPATCHES.run(group.db, [group.ids]);
  }

  /**
   * Outbox rows of the region that came due, up to `limit`: an immediate request's emails whose
   * publish was never confirmed, a scheduled email whose time has come. An email a worker has
   * claimed since (dispatch_count > 0) is in its lease's hands: its row is only dropped. A row
   * goes once all its emails are published; one partly published keeps the rest.
   */
  async publishDueOutbox(region: string, limit: number, publish: PublishDue): Promise<{ rows: number; published: number }> {
    return (await this.planes.of(region)).transaction(async (manager) => {
      const due: (DueRow & { dispatch_id: string; email_ids: string[] })[] = await manager.query(
        `SELECT d.id AS dispatch_id, d.email_ids, e.id, e.team_id, e.region, e.dispatch_count, ${RECIPIENT_DOMAINS}) AS domains
           FROM (SELECT id, email_ids FROM email_dispatches WHERE region = $1 AND due_at <= now()
                  ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
           LEFT JOIN emails e ON e.id = ANY(d.email_ids)`,
        [region, limit],
      );
      // An email deleted meanwhile (its team was) has nothing left to send.
      const emails = due.filter((row) => row.id !== null && row.dispatch_count === 0);
      const published = await publish(
        emails.map((row) => ({ emailId: row.id, teamId: row.team_id, region: row.region, domains: domainsOf(row.domains ?? []) })),
      );
      const left = new Map(due.map((row) => [row.dispatch_id, [] as string[]]));
      emails.forEach((row, i) => published[i] || left.get(row.dispatch_id)!.push(row.id));
      const done = [...left].filter(([, ids]) => ids.length === 0).map(([id]) => id);
      const partial = [...left].filter(([, ids]) => ids.length > 0);
      if (done.length) await DELETE_DISPATCHES.run(manager, [done]);
      for (const [id, ids] of partial) await manager.query(`UPDATE email_dispatches SET email_ids = $2 WHERE id = $1`, [id, ids]);
      return { rows: left.size, published: published.filter(Boolean).length };
    });
  }

  /**
   * Emails of the region a worker claimed whose lease ran out (the worker died) or whose next
   * retry is due, up to `limit`. Each published one moves to its next generation and its lease
   * one claim period ahead. A transaction that fails after publishing rolls the generation back,
   * so the next pass publishes the same Nats-Msg-Id and JetStream stores it once.
   */
  async publishDueLeases(region: string, limit: number, claimSeconds: number, publish: PublishDue): Promise<{ rows: number; published: number }> {
    return (await this.planes.of(region)).transaction(async (manager) => {
      const due: DueRow[] = await manager.query(
        `SELECT e.id, e.team_id, e.region, e.dispatch_count, e.dispatch_called,
                ${RECIPIENT_DOMAINS} AND r.status IN ('queued', 'deferred', 'sending')) AS domains
           FROM emails e
          WHERE region = $1 AND dispatch_at <= now()
          ORDER BY dispatch_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [region, limit],
      );
      const published = await publish(
        due.map((row) => ({
          emailId: row.id,
          teamId: row.team_id,
          region: row.region,
          generation: row.dispatch_count + 1,
          domains: domainsOf(row.domains ?? []),
          ...(row.dispatch_called && { called: true as const }),
        })),
      );
      const ids = due.filter((_, i) => published[i]).map((row) => row.id);
      if (ids.length) {
        await manager.query(
          `UPDATE emails SET dispatch_count = dispatch_count + 1, dispatch_at = now() + make_interval(secs => $2), dispatch_called = false
            WHERE id = ANY($1::uuid[])`,
          [ids, claimSeconds],
        );
      }
      return { rows: due.length, published: ids.length };
    });
  }
}
