import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { NatsService, type SendCommand } from '@herald/bus';
import { addressDomain, GroupCommit, HeraldError, HmacSha256Key, parseAddress, PeriodicJob, heraldClock } from '@herald/core';
import type { Transaction } from '@herald/database';
import {
  Dispatcher,
  emailEvent,
  EmailEventOutbox,
  EmailStore,
  ONCE_PER_EMAIL,
  type ClaimedEmail,
  type EmailEventRecord,
  type EmailOutcome,
} from '@herald/messages';
import { MetricsService } from '@herald/observability';
import { SuppressionsService } from '@herald/suppressions';
import { TrackingKeys, TrackingLinks } from '@herald/tracking';
import { isHardBounce } from '../bounce-classification';
import type { Bounce, Transmitter } from '../delivery.types';
import { verpKey } from '../message';
import { ClaimLeases } from './claim-leases';
import { DeliveryMetrics } from './delivery-metrics';
import { OutcomeCollector } from './outcome-collector';
import { Postponements } from './postponements';
import { prepareMessage } from './prepare-message';
import { SenderIdentities } from './sender-identity';
import { testAddressOutcome } from './test-addresses';
import { DELIVERY_CONFIG, DeliveryConfig } from '../delivery.config';

/** The Transmitter the engine sends through (SmtpTransmitter in the worker). */
export const TRANSMITTER = Symbol('TRANSMITTER');

/** A record is tried at least this many times, and for as long as its claim lasts. */
const RECORD_ATTEMPTS = 5;
/** The longest wait between two tries of a record. */
const RECORD_RETRY_MAX_MS = 2_000;

/**
 * The sender pipeline for one send command: claim the email's due recipients, decide each one
 * (suppressed, test address, or a real delivery to its domain's MX), record every outcome with
 * its events, suppress hard-bounced addresses, publish the events. Claims and records of the
 * emails in flight at once share statements (group commit), so Postgres costs a few round trips
 * per batch of emails rather than per email.
 *
 * An email whose delivery has to wait for its destination (every connection busy, or a probe
 * after a back-off still out) goes on in the background, in the destination's bounded queue:
 * `handle` resolves then, so the command stops holding one of the worker's slots and a slow or
 * dead destination cannot fill them all. Its claim stays held and renewed until the outcome is
 * recorded; shutdown waits for it (the transmitter hands queued jobs back unattempted).
 *
 * Before the claim, a command that names its recipients' domains is admitted by the transmitter.
 * While a destination's queue is full the email is postponed unclaimed (Postponements) and waits
 * on the destination's waitlist, rather than being claimed, built and signed only to be
 * deferred; it is called back, its place kept, once the queue has room. Not a nak with a delay:
 * JetStream counts such a message against max_ack_pending until it is redelivered, so a large
 * send to one destination would stall the whole stream.
 */
@Injectable()
export class DeliveryService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryService.name);
  private readonly claims: GroupCommit<string, ClaimedEmail | null>;
  private readonly postponements: Postponements;
  private readonly records: GroupCommit<EmailOutcome, EmailEventRecord[]>;
  private readonly metrics: DeliveryMetrics;
  private readonly verpKey: HmacSha256Key;
  private readonly trackingLinks: TrackingLinks;
  /** The claims of the emails this worker works on, and until when each surely lasts. */
  private readonly leases: ClaimLeases;
  /** When each claimed email's claim statement started. */
  private readonly claimedAt = new WeakMap<ClaimedEmail, number>();
  /** Every claimed email's work until its outcome is recorded, whether its command still waits on it or not. */
  private readonly inProgress = new Set<Promise<void>>();
  private readonly claimKeeper = new PeriodicJob(
    () => this.renewClaims(),
    () => (this.config.DELIVERY_CLAIM_SECONDS * 1000) / 3,
    (error) => this.logger.warn(`could not renew claims: ${error.message}`),
  );

  constructor(
    @Inject(DELIVERY_CONFIG.token) private readonly config: DeliveryConfig,
    private readonly store: EmailStore,
    private readonly identities: SenderIdentities,
    @Inject(TRANSMITTER) private readonly transmitter: Transmitter,
    private readonly outbox: EmailEventOutbox,
    private readonly suppressions: SuppressionsService,
    dispatcher: Dispatcher,
    metrics: MetricsService,
    nats: NatsService,
  ) {
    // Emails waiting in destination queues belong to no consumer's in-flight handler: finish them
    // (recorded, events published) while the connection can still publish.
    nats.beforeDrain(() => this.drain());
    this.claims = new GroupCommit({ maxInFlight: 2, maxItems: 200 }, (ids) => this.claimMany(ids));
    this.records = new GroupCommit({ maxInFlight: 2, maxItems: 200 }, (outcomes) => this.recordMany(outcomes));
    this.verpKey = verpKey(config.DKIM_ENCRYPTION_KEY === undefined ? undefined : Buffer.from(config.DKIM_ENCRYPTION_KEY, 'base64'));
    this.trackingLinks = new TrackingLinks(TrackingKeys.fromConfig(config), { protocol: config.TRACKING_PROTOCOL, port: config.TRACKING_PORT });
    this.metrics = new DeliveryMetrics(metrics);
    this.leases = new ClaimLeases(config.DELIVERY_CLAIM_SECONDS * 1000);
    this.postponements = new Postponements(store, dispatcher, config.DELIVERY_CLAIM_SECONDS, this.metrics, this.logger);
    this.transmitter.onRoom?.((emailIds) => this.postponements.callBack(emailIds));
  }

  onApplicationBootstrap(): void {
    this.claimKeeper.start();
  }

  onModuleDestroy(): Promise<void> {
    this.postponements.stop();
    return this.claimKeeper.stop();
  }

  /**
   * Admits the command (or postpones its email, unclaimed), claims the email's due recipients, calls
   * `claimed` (the command's work is durable in Postgres from here), delivers, and resolves once
   * the outcome is recorded or the delivery waits in a destination's queue. A failure before the
   * claim rejects (the command is redelivered); after it, the claim runs out and the reconciler
   * dispatches the email again.
   */
  async handle(command: SendCommand, claimed: () => void = () => undefined): Promise<void> {
    const admission =
      command.domains && (await this.transmitter.admit?.(command.emailId, command.domains.map(addressDomain), command.called === true));
    if (admission && admission.kind === 'waitlisted') return this.postponements.postpone(command.emailId, admission.expectedWaitMs);
    let email: ClaimedEmail | null;
    try {
      email = await this.claims.submit(command.emailId);
    } catch (error) {
      this.transmitter.release?.(command.emailId);
      throw error;
    }
    claimed();
    if (!email) {
      this.transmitter.release?.(command.emailId);
      return;
    }
    this.metrics.claimed(email);
    let release!: () => void;
    const released = new Promise<'waiting'>((resolve) => (release = () => resolve('waiting')));
    const work: Promise<void> = this.send(email, release).finally(() => this.inProgress.delete(work));
    this.inProgress.add(work);
    if ((await Promise.race([work, released])) !== 'waiting') return;
    work.catch((error: unknown) => this.logger.error(`email ${email.id} failed after it left its command: ${String(error)}; its claim will run out`));
  }

  /** Resolves once no claimed email is in progress. */
  private async drain(): Promise<void> {
    while (this.inProgress.size) await Promise.allSettled([...this.inProgress]);
  }

  private async send(email: ClaimedEmail, waiting: () => void): Promise<void> {
    const key = this.leases.hold(email.token, email.id, this.claimedAt.get(email) ?? performance.now());
    try {
      const outcome = await this.attempt(email, waiting, () => this.stillHeld(key));
      const fresh = await this.recordWithRetry(outcome);
      this.outbox.publish(fresh);
    } finally {
      this.transmitter.release?.(email.id);
      this.leases.release(key);
    }
  }

  /**
   * Keeps this worker's claims alive while it works on them (a queue wait, a slow MX), and learns
   * which were taken over: a renewal that came too late (the process stalled, Postgres slow to
   * answer) cannot win a claim back once another attempt has it.
   */
  private renewClaims(): Promise<number> {
    return this.leases.renew((tokens) => this.store.renewClaims(tokens, this.config.DELIVERY_CLAIM_SECONDS));
  }

  /**
   * The fence before each SMTP transaction (ClaimLeases.check): a job whose email was taken over,
   * or whose claim no renewal could confirm, is not sent. The attempt that holds the email now
   * sends it; an unconfirmed claim still ours is recorded deferred, and tried again.
   */
  private async stillHeld(key: string): Promise<boolean> {
    const check = await this.leases.check(key, () =>
      this.claimKeeper.runOnce().catch((error: Error) => {
        this.logger.warn(`could not confirm the claim ${key}: ${error.message}`);
        throw error;
      }),
    );
    if (check === 'held') return true;
    this.metrics.claimLost();
    const why = check === 'taken_over' ? 'another attempt took it over' : 'no renewal confirmed it in time';
    this.logger.warn(`claim ${key} ran out before its SMTP transaction (${why}); the job was not sent`);
    return false;
  }

  private async claimMany(ids: string[]): Promise<(ClaimedEmail | null)[]> {
    const startedAt = performance.now();
    const { claimed, events } = await this.store.claim(ids, this.config.DELIVERY_CLAIM_SECONDS, (emails) =>
      emails.filter((e) => e.firstClaim).map((e) => emailEvent('email.sent', e, e.to, heraldClock.now(), ONCE_PER_EMAIL)),
    );
    for (const email of claimed.values()) this.claimedAt.set(email, startedAt);
    this.outbox.publish(events);
    // The same email twice in one group (a duplicate command) is claimed once.
    const seen = new Set<string>();
    return ids.map((id) => {
      if (seen.has(id)) return null;
      seen.add(id);
      return claimed.get(id) ?? null;
    });
  }

  /** Every claimed recipient's outcome. Never throws: what cannot be attempted is deferred or failed. */
  private async attempt(email: ClaimedEmail, waiting: () => void, held: () => Promise<boolean>): Promise<EmailOutcome> {
    const collect = new OutcomeCollector(email, {
      scheduleSeconds: this.config.DELIVERY_RETRY_SCHEDULE,
      expirySeconds: this.config.DELIVERY_EXPIRY_SECONDS,
    });
    const real = email.recipients.filter((r) => {
      const test = testAddressOutcome(r.address, this.config.TEST_ADDRESS_DOMAINS);
      if (test?.kind === 'suppressed') collect.suppressed(r, 'previous_bounce');
      else if (r.suppressedBy)
        collect.suppressed(r, r.suppressedBy === 'complaint' ? 'previous_complaint' : r.suppressedBy === 'bounce' ? 'previous_bounce' : 'manual');
      else if (test) collect.testAddress(r, test);
      return !test && !r.suppressedBy;
    });
    if (real.length) {
      await this.deliver(email, real, collect, waiting, held).catch((error: unknown) => {
        // A lookup or build that broke (Postgres unreachable, a bug) defers; nothing was sent yet.
        this.logger.error(`email ${email.id} could not be prepared: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        collect.deferredAll(real, '451 4.3.0 Herald could not prepare the email; it will try again');
      });
    }
    const outcome = collect.finish();
    this.metrics.attempted(email, outcome);
    return outcome;
  }

  private async deliver(
    email: ClaimedEmail,
    recipients: ClaimedEmail['recipients'],
    collect: OutcomeCollector,
    waiting: () => void,
    held: () => Promise<boolean>,
  ): Promise<void> {
    const fromAddress = parseAddress(email.from)?.address ?? email.from;
    const lookup = await this.identities.lookup(email.teamId, addressDomain(fromAddress));
    if (!lookup.ok) return collect.failed(recipients, lookup.reason, lookup.message);
    const tracking = lookup.identity.tracking;
    this.metrics.built(email);
    const prepared = await prepareMessage(
      email,
      lookup.identity,
      this.verpKey,
      this.config.MAX_EMAIL_BYTES,
      this.config.ATTACHMENT_ALLOWED_ADDRESSES,
      tracking && { track: (html, headers) => this.trackingLinks.prepare(tracking, { id: email.id, html, headers }), recipients },
    );
    if (prepared.kind === 'failed') return collect.failed(recipients, prepared.reason, prepared.message);
    if (prepared.kind === 'deferred') return collect.deferredAll(recipients, prepared.message);
    // One SMTP transaction per recipient domain; a tracked email's recipients each get their own bytes, so one each.
    const jobs: { domain: string; addresses: string[]; message: Buffer }[] = [];
    if (prepared.kind === 'personal') {
      for (const r of recipients)
        jobs.push({ domain: addressDomain(r.address), addresses: [r.address], message: prepared.messages.get(r.position)! });
    } else {
      const byDomain = new Map<string, string[]>();
      for (const r of recipients) {
        const domain = addressDomain(r.address);
        byDomain.set(domain, [...(byDomain.get(domain) ?? []), r.address]);
      }
      for (const [domain, addresses] of byDomain) jobs.push({ domain, addresses, message: prepared.message });
    }
    const results = await Promise.all(
      jobs.map(({ domain, addresses, message }) =>
        this.transmitter.deliver(
          {
            emailId: email.id,
            domain,
            recipients: addresses,
            envelopeFrom: prepared.envelopeFrom,
            message,
            requireTls: lookup.identity.requireTls,
            held,
          },
          waiting,
        ),
      ),
    );
    for (const jobResults of results) {
      this.metrics.transmitted(jobResults);
      collect.transmitted(jobResults);
    }
  }

  /**
   * A record that cannot be written is retried: the email was (perhaps) sent, so its outcome must
   * not be lost. It is retried for as long as the claim lasts (Postgres restarting, its disk full):
   * a record that lands before the claim runs out saves the recipients from being sent again. Once
   * the claim has run out another attempt may take them over, and the record would apply nothing.
   */
  private async recordWithRetry(outcome: EmailOutcome): Promise<EmailEventRecord[]> {
    const giveUpAt = Date.now() + this.config.DELIVERY_CLAIM_SECONDS * 1000;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.records.submit(outcome);
      } catch (error) {
        if (attempt >= RECORD_ATTEMPTS && Date.now() >= giveUpAt) throw error;
        this.logger.warn(`recording the outcome of email ${outcome.emailId} failed (attempt ${attempt}): ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(RECORD_RETRY_MAX_MS, 250 * 2 ** attempt)));
      }
    }
  }

  /**
   * Records outcomes in one transaction with the suppressions their hard bounces cause, so that
   * a bounce is never on record without its suppression (a crash between the two used to leave the
   * address to be tried again); suppression.added is published once that has committed.
   */
  private async recordMany(outcomes: EmailOutcome[]): Promise<EmailEventRecord[][]> {
    const announcements: (() => Promise<void>)[] = [];
    const recorded = await this.store.record(outcomes, async (tx, fresh) => {
      // In one order, so that two transactions suppressing the same addresses never deadlock.
      const suppressions = fresh.flat().flatMap((event) => this.hardBounceSuppressions(event));
      suppressions.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      for (const { suppress } of suppressions) announcements.push(await suppress(tx));
    });
    await Promise.all(announcements.map((announce) => announce()));
    return recorded;
  }

  /** A hard bounce puts each of its addresses on the team's suppression list (test addresses never). */
  private hardBounceSuppressions(event: EmailEventRecord): { key: string; suppress: (tx: Transaction) => Promise<() => Promise<void>> }[] {
    if (event.type !== 'email.bounced') return [];
    const bounce = event.data.bounce as Bounce | undefined;
    if (!bounce || !isHardBounce(bounce)) return [];
    return event.recipients
      .filter((address) => !testAddressOutcome(address, this.config.TEST_ADDRESS_DOMAINS))
      .map((address) => ({
        key: `${event.teamId} ${address.toLowerCase()}`,
        suppress: async (tx: Transaction) => {
          try {
            return (await this.suppressions.suppressWithin(tx, event.teamId, address, 'bounce', event.emailId, bounce.message)).publish;
          } catch (error) {
            // Refused before any write (an address the list cannot hold): the bounce is recorded without it.
            if (!(error instanceof HeraldError)) throw error;
            this.logger.error(`could not suppress ${address} after its hard bounce (email ${event.emailId}): ${error.message}`);
            return async () => undefined;
          }
        },
      }));
  }
}
