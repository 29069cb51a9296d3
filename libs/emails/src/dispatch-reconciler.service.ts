import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { PeriodicJob } from '@herald/core';
import { SendPublisher, type SendCommand } from '@herald/bus';
import { MetricsService } from '@herald/observability';

interface DueRow {
  id: string;
  team_id: string;
  region: string;
  dispatch_count: number;
}

/**
 * Publishes every email of this role's region whose dispatch is overdue. From the dispatch
 * outbox (email_dispatches): emails whose publish was never confirmed (lost publish, broker
 * restart, crash between commit and publish) and a scheduled email whose time has come.
 * From the emails' leases (emails.dispatch_at): an email whose worker died holding it, and one
 * whose next retry is due. Rows are locked with SKIP LOCKED, so any number of reconcilers can run
 * side by side without publishing one email twice.
 *
 * The rule that keeps an accepted email from being stranded: once a worker has claimed an email
 * (dispatch_count > 0), emails.dispatch_at is set for as long as any recipient is not final, and
 * publishing never clears it. A lease republish moves it one claim period ahead and bumps
 * dispatch_count, so each republish has a Nats-Msg-Id of its own: a command that JetStream drops
 * as a duplicate, or that a worker consumes while another still holds the claim, leaves the
 * lease to come due again instead of losing the email. The worker's claim in Postgres, not the
 * dedupe window, keeps the email from being sent twice.
 */
@Injectable()
export class DispatchReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DispatchReconciler.name);
  private readonly reconciled;
  private readonly job = new PeriodicJob(
    () => this.drain(),
    () => this.config.RECONCILE_INTERVAL_MS,
    (error) => this.logger.warn(`reconcile failed: ${error.message}`),
  );

  constructor(
    @Inject(CONFIG) private readonly config: HeraldConfig,
    private readonly db: DataSource,
    private readonly publisher: SendPublisher,
    metrics: MetricsService,
  ) {
    this.reconciled = metrics.counter(
      'herald_reconciler_dispatched_total',
      'Emails published by the reconciler: overdue immediate emails and due scheduled ones',
    );
  }

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** One pass: publishes what is due (up to RECONCILE_BATCH_SIZE per query) and returns how many. */
  runOnce(): Promise<number> {
    return this.job.runOnce();
  }

  private async drain(): Promise<number> {
    let total = 0;
    for (const pass of [() => this.publishDueOutbox(), () => this.publishDueLeases()]) {
      for (;;) {
        const { rows, published } = await pass();
        total += published;
        if (rows < this.config.RECONCILE_BATCH_SIZE || this.job.isStopped) break;
      }
    }
    this.reconciled.inc(total);
    if (total) this.logger.log(`dispatched ${total} overdue email(s) in ${this.config.HERALD_REGION}`);
    return total;
  }

  /**
   * Outbox rows that came due: an immediate request's emails whose publish was never confirmed,
   * a scheduled email whose time has come. They are published with the email id as Nats-Msg-Id,
   * the id of the send path's own publish, so one that did reach the stream is stored once. An
   * email a worker has claimed since (dispatch_count > 0) is in its lease's hands: its row is
   * only dropped. A row goes once all its emails are published; one partly published keeps the
   * rest for the next pass.
   */
  private publishDueOutbox(): Promise<{ rows: number; published: number }> {
    return this.db.transaction(async (manager) => {
      const due: (DueRow & { dispatch_id: string; email_ids: string[] })[] = await manager.query(
        `SELECT d.id AS dispatch_id, d.email_ids, e.id, e.team_id, e.region, e.dispatch_count
           FROM (SELECT id, email_ids FROM email_dispatches WHERE region = $1 AND due_at <= now()
                  ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
           LEFT JOIN emails e ON e.id = ANY(d.email_ids)`,
        [this.config.HERALD_REGION, this.config.RECONCILE_BATCH_SIZE],
      );
      // An email deleted meanwhile (its team was) has nothing left to send.
      const emails = due.filter((row) => row.id !== null && row.dispatch_count === 0);
      const published = await this.publish(emails.map((row) => ({ emailId: row.id, teamId: row.team_id, region: row.region })));
      const left = new Map(due.map((row) => [row.dispatch_id, [] as string[]]));
      emails.forEach((row, i) => published[i] || left.get(row.dispatch_id)!.push(row.id));
      const done = [...left].filter(([, ids]) => ids.length === 0).map(([id]) => id);
      const partial = [...left].filter(([, ids]) => ids.length > 0);
      if (done.length) await manager.query(`DELETE FROM email_dispatches WHERE id = ANY($1::uuid[])`, [done]);
      for (const [id, ids] of partial) await manager.query(`UPDATE email_dispatches SET email_ids = $2 WHERE id = $1`, [id, ids]);
      return { rows: left.size, published: published.filter(Boolean).length };
    });
  }

  /**
   * Emails a worker claimed whose lease ran out (the worker died) or whose next retry is due.
   * Each is published as its next generation and its lease moved one claim period ahead: the
   * worker that claims it sets its own lease, and if none does (the command was lost, or dropped
   * as a duplicate), the lease comes due again. A transaction that fails after publishing rolls
   * the generation back, so the next pass publishes the same Nats-Msg-Id and JetStream stores it once.
   */
  private publishDueLeases(): Promise<{ rows: number; published: number }> {
    return this.db.transaction(async (manager) => {
      const due: DueRow[] = await manager.query(
        `SELECT id, team_id, region, dispatch_count FROM emails
          WHERE region = $1 AND dispatch_at <= now()
          ORDER BY dispatch_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.config.HERALD_REGION, this.config.RECONCILE_BATCH_SIZE],
      );
      const published = await this.publish(
        due.map((row) => ({ emailId: row.id, teamId: row.team_id, region: row.region, generation: row.dispatch_count + 1 })),
      );
      const ids = due.filter((_, i) => published[i]).map((row) => row.id);
      if (ids.length) {
        await manager.query(
          `UPDATE emails SET dispatch_count = dispatch_count + 1, dispatch_at = now() + make_interval(secs => $2)
            WHERE id = ANY($1::uuid[])`,
          [ids, this.config.DELIVERY_CLAIM_SECONDS],
        );
      }
      return { rows: due.length, published: ids.length };
    });
  }

  /** Publishes each send command; true where the stream acknowledged it. */
  private async publish(commands: SendCommand[]): Promise<boolean[]> {
    const results = await Promise.allSettled(commands.map((command) => this.publisher.publish(command)));
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed) this.logger.warn(`${failed} publish(es) failed; retrying next pass`);
    return results.map((r) => r.status === 'fulfilled');
  }
}
