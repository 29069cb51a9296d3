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
 * Publishes every email of this role's region whose dispatch is overdue: an immediate email
 * whose publish was never confirmed (lost publish, broker restart, crash between commit and
 * publish) and a scheduled email whose time has come. Rows are locked with SKIP LOCKED, so any
 * number of reconcilers can run side by side without publishing one email twice.
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
    for (;;) {
      const published = await this.publishDueBatch();
      total += published;
      if (published < this.config.RECONCILE_BATCH_SIZE || this.job.isStopped) break;
    }
    this.reconciled.inc(total);
    if (total) this.logger.log(`dispatched ${total} overdue email(s) in ${this.config.HERALD_REGION}`);
    return total;
  }

  private publishDueBatch(): Promise<number> {
    return this.db.transaction(async (manager) => {
      const due: DueRow[] = await manager.query(
        `SELECT id, team_id, region, dispatch_count FROM emails
         WHERE region = $1 AND dispatched_at IS NULL AND dispatch_at <= now()
         ORDER BY dispatch_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [this.config.HERALD_REGION, this.config.RECONCILE_BATCH_SIZE],
      );
      if (!due.length) return 0;
      const results = await Promise.allSettled(
        due.map((row) => this.publisher.publish({ emailId: row.id, teamId: row.team_id, region: row.region, generation: row.dispatch_count })),
      );
      const published = due.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.id);
      if (published.length < due.length) this.logger.warn(`${due.length - published.length} publish(es) failed; retrying next pass`);
      if (published.length) {
        await manager.query(`UPDATE emails SET dispatched_at = now() WHERE id = ANY($1::uuid[])`, [published]);
      }
      return published.length;
    });
  }
}
