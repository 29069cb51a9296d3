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
 * outbox (email_dispatches): an immediate email whose publish was never confirmed (lost publish,
 * broker restart, crash between commit and publish) and a scheduled email whose time has come.
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
    for (const source of [OUTBOX, LEASES]) {
      for (;;) {
        const published = await this.publishDueBatch(source);
        total += published;
        if (published < this.config.RECONCILE_BATCH_SIZE || this.job.isStopped) break;
      }
    }
    this.reconciled.inc(total);
    if (total) this.logger.log(`dispatched ${total} overdue email(s) in ${this.config.HERALD_REGION}`);
    return total;
  }

  private publishDueBatch(source: DueSource): Promise<number> {
    return this.db.transaction(async (manager) => {
      const due: DueRow[] = await manager.query(source.select, [this.config.HERALD_REGION, this.config.RECONCILE_BATCH_SIZE]);
      if (!due.length) return 0;
      const results = await Promise.allSettled(
        due.map((row) => this.publisher.publish({ emailId: row.id, teamId: row.team_id, region: row.region, generation: row.dispatch_count })),
      );
      const published = due.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.id);
      if (published.length < due.length) this.logger.warn(`${due.length - published.length} publish(es) failed; retrying next pass`);
      if (published.length) await manager.query(source.done, [published]);
      return published.length;
    });
  }
}

interface DueSource {
  /** Due emails of region $1, at most $2, locked (SKIP LOCKED) until the transaction ends. */
  select: string;
  /** Records that the emails $1 were published. */
  done: string;
}

/** Emails whose first send command was never confirmed, and scheduled emails that came due. */
const OUTBOX: DueSource = {
  select: `SELECT e.id, e.team_id, e.region, e.dispatch_count
             FROM (SELECT email_id FROM email_dispatches WHERE region = $1 AND due_at <= now()
                    ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
             JOIN emails e ON e.id = d.email_id`,
  done: `DELETE FROM email_dispatches WHERE email_id = ANY($1::uuid[])`,
};

/** Emails a worker claimed whose lease ran out (the worker died) or whose next retry is due. */
const LEASES: DueSource = {
  select: `SELECT id, team_id, region, dispatch_count FROM emails
            WHERE region = $1 AND dispatch_at <= now()
            ORDER BY dispatch_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
  done: `UPDATE emails SET dispatch_at = NULL WHERE id = ANY($1::uuid[])`,
};
