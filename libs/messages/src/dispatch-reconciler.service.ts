import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { MetricsService } from '@herald/observability';
import { Dispatcher } from './dispatcher.service';

/**
 * Runs the dispatch outbox's relay in the roles that reconcile (the API and the worker of each
 * region): it publishes every email of the role's region whose dispatch is overdue. From the
 * dispatch outbox (email_dispatches): emails whose publish was never confirmed and a scheduled
 * email whose time has come. From the emails' leases (emails.dispatch_at): an email whose worker
 * died holding it, and one whose next retry is due. Rows are locked with SKIP LOCKED, so any
 * number of reconcilers can run side by side without publishing one email twice.
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
export class DispatchReconciler implements OnApplicationBootstrap {
  private readonly reconciled;

  constructor(
    private readonly dispatcher: Dispatcher,
    metrics: MetricsService,
  ) {
    this.reconciled = metrics.counter(
      'herald_reconciler_dispatched_total',
      'Emails published by the reconciler: overdue immediate emails and due scheduled ones',
    );
  }

  onApplicationBootstrap(): void {
    this.dispatcher.startRelay(() => this.reconciled.inc());
  }

  /** One pass: publishes what is due (up to RECONCILE_BATCH_SIZE per query) and returns how many. */
  runOnce(): Promise<number> {
    return this.dispatcher.relayOnce();
  }
}
