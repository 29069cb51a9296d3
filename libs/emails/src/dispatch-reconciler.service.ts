import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { PeriodicJob } from '@herald/core';
import { SendPublisher } from '@herald/bus';
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
   * a scheduled email whose time has come. A row goes once all its emails are published; one
   * partly published keeps the rest for the next pass.
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
      const emails = due.filter((row) => row.id !== null);
      const published = await this.publish(emails);
      const left = new Map(due.map((row) => [row.dispatch_id, [] as string[]]));
      emails.forEach((row, i) => published[i] || left.get(row.dispatch_id)!.push(row.id));
      const done = [...left].filter(([, ids]) => ids.length === 0).map(([id]) => id);
      const partial = [...left].filter(([, ids]) => ids.length > 0);
      if (done.length) await manager.query(`DELETE FROM email_dispatches WHERE id = ANY($1::uuid[])`, [done]);
      for (const [id, ids] of partial) await manager.query(`UPDATE email_dispatches SET email_ids = $2 WHERE id = $1`, [id, ids]);
      return { rows: left.size, published: published.filter(Boolean).length };
    });
  }

  /** Emails a worker claimed whose lease ran out (the worker died) or whose next retry is due. */
  private publishDueLeases(): Promise<{ rows: number; published: number }> {
    return this.db.transaction(async (manager) => {
      const due: DueRow[] = await manager.query(
        `SELECT id, team_id, region, dispatch_count FROM emails
          WHERE region = $1 AND dispatch_at <= now()
          ORDER BY dispatch_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.config.HERALD_REGION, this.config.RECONCILE_BATCH_SIZE],
      );
      const published = await this.publish(due);
      const ids = due.filter((_, i) => published[i]).map((row) => row.id);
      if (ids.length) await manager.query(`UPDATE emails SET dispatch_at = NULL WHERE id = ANY($1::uuid[])`, [ids]);
      return { rows: due.length, published: ids.length };
    });
  }

  /** Publishes each email's send command; true where the stream acknowledged it. */
  private async publish(due: DueRow[]): Promise<boolean[]> {
    const results = await Promise.allSettled(
      due.map((row) => this.publisher.publish({ emailId: row.id, teamId: row.team_id, region: row.region, generation: row.dispatch_count })),
    );
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed) this.logger.warn(`${failed} publish(es) failed; retrying next pass`);
    return results.map((r) => r.status === 'fulfilled');
  }
}
