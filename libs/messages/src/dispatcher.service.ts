import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { SendPublisher } from '@herald/bus';
import { MetricsService } from '@herald/observability';
import { Outbox, outboxTuning } from '@herald/outbox';
import { DispatchRepository, domainsOf, type DueDispatch } from './dispatch.repository';
import type { NewEmail } from './email-record.types';
import { MESSAGES_CONFIG, MessagesConfig } from './messages.config';

/** A send command to publish, and (from the send path) the outbox row that lists its email. */
type DispatchEntry = DueDispatch & { dispatchId?: string };

/**
 * The dispatch outbox. Publishes send commands to the JetStream stream of each email's region
 * (Nats-Msg-Id = email id, then `<id>.<generation>`) and records, off the request's critical
 * path, which publishes the broker acknowledged, by deleting their rows from email_dispatches.
 * Its relay (started by the DispatchReconciler in the roles that run it) publishes what is
 * overdue: outbox rows whose publish was never confirmed (lost publish, broker restart, crash
 * between commit and publish) or whose scheduled time has come, then the emails' leases
 * (emails.dispatch_at) that ran out or whose next retry is due. JetStream's dedupe window and the
 * worker's claim in Postgres keep a republish from sending an email twice.
 */
@Injectable()
export class Dispatcher implements OnModuleDestroy {
  private readonly outbox: Outbox<DispatchEntry>;
  private readonly published;
  private onRelayed: () => void = () => undefined;

  constructor(
    @Inject(MESSAGES_CONFIG.token) config: MessagesConfig,
    publisher: SendPublisher,
    dispatches: DispatchRepository,
    metrics: MetricsService,
  ) {
    this.published = metrics.counter('herald_send_commands_published_total', 'Send commands published to JetStream by the send path, by outcome', [
      'outcome',
    ]);
    const region = config.HERALD_REGION;
    this.outbox = new Outbox<DispatchEntry>(
      'dispatches',
      {
        publish: ({ emailId, teamId, region, generation, domains, called }) =>
          publisher.publish({
            emailId,
            teamId,
            region,
            ...(generation !== undefined && { generation }),
            ...(domains && { domains }),
            ...(called && { called }),
          }),
        describe: (e) => ({ id: e.emailId, type: 'send command of email' }),
        rowOf: (e) => e.dispatchId ?? e.emailId,
        confirm: (ids) => dispatches.confirm(ids),
      },
      [
        (limit, publish) => dispatches.publishDueOutbox(region, limit, publish),
        (limit, publish) => dispatches.publishDueLeases(region, limit, config.DELIVERY_CLAIM_SECONDS, publish),
      ],
      outboxTuning(config),
      new Logger(Dispatcher.name),
      (_, path) => path === 'relay' && this.onRelayed(),
    );
  }

  /**
   * Publishes the send command of each email; never throws: a failed publish is left to the
   * relay. An outbox row is confirmed (deleted) once every email it lists was acknowledged.
   * Returns how many were acknowledged.
   */
  async dispatch(
    emails: (Pick<NewEmail, 'id' | 'teamId' | 'region' | 'dispatchId'> & { email?: Pick<NewEmail['email'], 'recipients'> })[],
  ): Promise<number> {
    const acked = await this.outbox.publish(
      emails.map((e) => ({
        emailId: e.id,
        teamId: e.teamId,
        region: e.region,
        dispatchId: e.dispatchId,
        domains: e.email && domainsOf(e.email.recipients.map((r) => r.address)),
      })),
    );
    const acknowledged = acked.filter(Boolean).length;
    if (acknowledged) this.published.inc({ outcome: 'acknowledged' }, acknowledged);
    if (acknowledged < emails.length) this.published.inc({ outcome: 'failed' }, emails.length - acknowledged);
    return acknowledged;
  }

  /** Starts the relay of overdue dispatches and leases; `onRelayed` is called for each email it publishes. */
  startRelay(onRelayed: () => void): void {
    this.onRelayed = onRelayed;
    this.outbox.start();
  }

  /** One relay run now: publishes what is due (up to RECONCILE_BATCH_SIZE per query) and returns how many. */
  relayOnce(): Promise<number> {
    return this.outbox.relayOnce();
  }

  onModuleDestroy(): Promise<void> {
    return this.outbox.close();
  }
}
