import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CONFIG, HeraldConfig } from '@herald/config';
import { PeriodicJob } from '@herald/core';
import { SendPublisher, type SendCommand } from '@herald/bus';
import { MetricsService } from '@herald/observability';
import { DispatchRepository } from './dispatch.repository';

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
    private readonly dispatches: DispatchRepository,
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
   * Outbox rows that came due. They are published with the email id as Nats-Msg-Id, the id of
   * the send path's own publish, so one that did reach the stream is stored once.
   */
  private publishDueOutbox(): Promise<{ rows: number; published: number }> {
    return this.dispatches.publishDueOutbox(this.config.HERALD_REGION, this.config.RECONCILE_BATCH_SIZE, (due) => this.publish(due));
  }

  /**
   * Expired and due leases, each published as its next generation: the worker that claims it
   * sets its own lease, and if none does (the command was lost, or dropped as a duplicate), the
   * lease comes due again.
   */
  private publishDueLeases(): Promise<{ rows: number; published: number }> {
    const { HERALD_REGION, RECONCILE_BATCH_SIZE, DELIVERY_CLAIM_SECONDS } = this.config;
    return this.dispatches.publishDueLeases(HERALD_REGION, RECONCILE_BATCH_SIZE, DELIVERY_CLAIM_SECONDS, (due) => this.publish(due));
  }

  /** Publishes each send command; true where the stream acknowledged it. */
  private async publish(commands: SendCommand[]): Promise<boolean[]> {
    const results = await Promise.allSettled(commands.map((command) => this.publisher.publish(command)));
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed) this.logger.warn(`${failed} publish(es) failed; retrying next pass`);
    return results.map((r) => r.status === 'fulfilled');
  }
}
