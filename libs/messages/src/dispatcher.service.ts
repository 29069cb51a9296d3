import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { SendPublisher, type SendChunk } from '@herald/bus';
import { MetricsService } from '@herald/observability';
import { Outbox, outboxTuning } from '@herald/outbox';
import { DispatchRepository, domainsOf, type DueDispatch } from './dispatch.repository';
import type { NewEmail } from './email-record.types';
import { MESSAGES_CONFIG, MessagesConfig } from './messages.config';

/** A send command to publish, and (from the send path) the outbox row that lists its email. */
type CommandEntry = DueDispatch & { dispatchId?: string };
/** The commands of all the emails of one outbox row, as one message (a broadcast's chunk). */
type ChunkEntry = { chunk: SendChunk; dispatchId: string };
type DispatchEntry = CommandEntry | ChunkEntry;

const isChunk = (e: DispatchEntry): e is ChunkEntry => 'chunk' in e;

/** What the dispatch of an email needs to know of it. */
type Dispatched = Pick<NewEmail, 'id' | 'teamId' | 'region' | 'dispatchId'> & { email?: Pick<NewEmail['email'], 'recipients'> };

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
        publish: (e) => {
          if (isChunk(e)) return publisher.publishChunk(e.chunk, e.dispatchId);
          const { emailId, teamId, region, generation, domains, called } = e;
          return publisher.publish({
            emailId,
            teamId,
            region,
            ...(generation !== undefined && { generation }),
            ...(domains && { domains }),
            ...(called && { called }),
          });
        },
        describe: (e) =>
          isChunk(e) ? { id: e.dispatchId, type: `send chunk of ${e.chunk.emails.length} emails` } : { id: e.emailId, type: 'send command of email' },
        rowOf: (e) => (isChunk(e) ? e.dispatchId : (e.dispatchId ?? e.emailId)),
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
  async dispatch(emails: Dispatched[]): Promise<number> {
    const acked = await this.outbox.publish(
      emails.map((e) => ({ emailId: e.id, teamId: e.teamId, region: e.region, dispatchId: e.dispatchId, domains: domainsHint(e) })),
    );
    return this.count(emails.length, acked.filter(Boolean).length);
  }

  /**
   * Publishes the send commands of the emails of one outbox row (of one team and region: a
   * broadcast's chunk) as one message on the send stream's chunk subject; never throws. Once it
   * is acknowledged the row is confirmed; if it is not, the relay publishes the row's emails one
   * by one. Returns how many emails were acknowledged (all or none).
   */
  async dispatchChunk(emails: Dispatched[]): Promise<number> {
    if (!emails.length) return 0;
    const { teamId, region, dispatchId } = emails[0]!;
    const stray = emails.find((e) => e.teamId !== teamId || e.region !== region || e.dispatchId !== dispatchId);
    if (stray) throw new Error(`email ${stray.id} is not of the chunk's team, region and outbox row`);
    const chunk: SendChunk = { teamId, region, emails: emails.map((e) => ({ id: e.id, domains: domainsHint(e) })) };
    const [acked] = await this.outbox.publish([{ chunk, dispatchId }]);
    return this.count(emails.length, acked ? emails.length : 0);
  }

  private count(emails: number, acknowledged: number): number {
    if (acknowledged) this.published.inc({ outcome: 'acknowledged' }, acknowledged);
    if (acknowledged < emails) this.published.inc({ outcome: 'failed' }, emails - acknowledged);
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

/** The domains of an email's recipients (a worker admits it by them), when the send path knows them. */
const domainsHint = (e: Dispatched): string[] | undefined => e.email && domainsOf(e.email.recipients.map((r) => r.address));
