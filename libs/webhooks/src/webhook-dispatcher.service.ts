import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { GroupCommit, PeriodicJob, heraldClock } from '@herald/core';
import { isPostgresUnreachable } from '@herald/database';
import { performance } from 'node:perf_hooks';
import { capacitySignal } from './adaptive-concurrency';
import { type AddressAllowList, addressAllowList } from './endpoint-address';
import {
  dispatchOptionsFromConfig,
  nextRetryDelayMs,
  parseRetryAfter,
  WEBHOOK_DISPATCH_OPTIONS,
  WebhookDispatchOptions,
} from './webhook-dispatch.options';
import { StrandedClaimsError, WebhookClaimsRepository } from './webhook-claims.repository';
import { WebhookFanOutService } from './webhook-fan-out.service';
import { DEFAULT_ENDPOINT_CONNECTIONS, EndpointConnections, HttpAttemptResult, postWebhook } from './webhook-http.client';
import {
  AttemptOutcome,
  DueMessage,
  MessageSettlement,
  WebhookHealthNotRecordedError,
  WebhookMessagesRepository,
} from './webhook-messages.repository';
import { WebhookLimits } from './webhook-limits';
import { signingSecrets, signPayload } from './webhook-secrets';
import { WEBHOOKS_CONFIG, WebhooksConfig } from './webhooks.config';

/** Both header families (Standard Webhooks and Svix), one `v1,` signature per secret valid now. */
export function signedHeaders(
  message: Pick<DueMessage, 'id' | 'signingSecret' | 'previousSecret' | 'previousSecretExpiresAt'>,
  body: string,
  now: Date,
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signature = signingSecrets(message, now)
    .map((secret) => signPayload(secret, message.id, timestamp, body))
    .join(' ');
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
    'svix-id': message.id,
    'svix-timestamp': String(timestamp),
    'svix-signature': signature,
    'user-agent': 'Herald-Webhooks/1',
  };
}

/** The message's fate after an attempt: 2xx success, 410 disables the endpoint, anything else retries on the schedule. */
export function settle(result: HttpAttemptResult, attemptsMade: number, options: WebhookDispatchOptions, now: Date): MessageSettlement {
  if (result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300) return { status: 'success' };
  if (result.kind === 'response' && result.statusCode === 410) return { status: 'failed', disableWebhook: 'endpoint answered 410 Gone' };
  const retryAfter = result.kind === 'response' ? parseRetryAfter(result.retryAfter) : null;
  const delay = nextRetryDelayMs(options, attemptsMade, retryAfter);
  return delay === null ? { status: 'failed', disableWebhook: null } : { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay) };
}

const WAKE_DELAY_MS = 5;
/** Outcome batches being committed at once, and the most outcomes in one (group commit). */
const RECORD_BATCHES_IN_FLIGHT = 2;
const RECORD_BATCH_MAX = 512;

/**
 * Claimed messages a webhook may hold waiting behind its requests in flight, in rounds of its
 * current limit (so a freed slot starts the next delivery without a trip to the database). Only
 * when `attemptTimeoutMs` × (rounds + 1) fits well in the lease; a webhook whose limit is cut
 * hands back what its queue holds beyond rounds of the new limit, so that still holds.
 */
const QUEUE_ROUNDS = 2;
const LIMIT_SWEEP_MS = 10_000;
/**
 * How often the webhooks with due messages are looked up, and how many at most: the next claim
 * reads each by its own due index, so one whose messages are newer than another's backlog is not
 * left waiting until that backlog has drained below the claim's window of oldest messages. The
 * same look-up finds the disabled webhooks with messages, which the claims skip until the next:
 * so a webhook enabled again is delivered to within this long.
 */
const DISCOVER_MS = 1_000;
const DISCOVER_MAX = 1_000;
/** The longest an outcome's recording is retried while Postgres cannot be reached (at most half the lease). */
const RECORD_RETRY_MS = 60_000;

/**
 * Polls due webhook messages and POSTs them, concurrently: at most `globalConcurrency` claimed
 * and not yet recorded (queued, in flight or being recorded), and per webhook as many requests
 * in flight as its AdaptiveConcurrency allows: `perWebhookConcurrency` at first, more while its
 * endpoint keeps up with a backlog (up to `maxPerWebhookConcurrency`), halved on timeouts, 5xx
 * and 429. A slow endpoint only ever holds its own slots, and no webhook may hold (in flight +
 * queued) more than an equal share of the process's slots with one share left for a newcomer
 * (never less than its floor's worth), so endpoints that adapted upwards cannot crowd out the
 * rest. Each webhook has a short queue of claimed messages, so a freed slot starts the next
 * delivery at once. Outcomes are recorded in batches (all the outcomes that finish while the
 * previous batch commits: one transaction for their attempts and messages, then one for their
 * webhooks' health); connections are kept alive per checked address. A
 * fan-out in this process wakes the poll at once. Shutdown stops polling, hands the queued claims
 * back and waits for the attempts in flight.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly options: WebhookDispatchOptions;
  private readonly allowed: AddressAllowList;
  /** Deliveries started and not yet recorded. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Requests in flight per webhook. */
  private readonly active = new Map<string, number>();
  /** Claimed messages waiting for a slot of their webhook. */
  private readonly queues = new Map<string, DueMessage[]>();
  private readonly limits: WebhookLimits;
  private limitsSweptAt = performance.now();
  /** Webhooks with due messages when last looked up (until the next claim), and when that was. */
  private discovered: readonly string[] = [];
  private discoveredAt = -Infinity;
  /** Disabled webhooks with messages left, found by look-ups and claims: claims skip them. */
  private stopped = new Set<string>();
  /** Claims being handed back after a cut. */
  private readonly releasing = new Set<Promise<void>>();
  /** Messages a claim took whose reading failed (StrandedClaimsError): handed back by the next poll. */
  private stranded: string[] = [];
  private queued = 0;
  private readonly queueRounds: number;
  private readonly job: PeriodicJob;
  private wakeTimer: NodeJS.Timeout | null = null;
  private readonly connections: EndpointConnections;
  private readonly outcomes: GroupCommit<AttemptOutcome, null>;

  constructor(
    private readonly messages: WebhookMessagesRepository,
    private readonly claims: WebhookClaimsRepository,
    @Inject(WEBHOOKS_CONFIG.token) config: WebhooksConfig,
    @Optional() @Inject(WEBHOOK_DISPATCH_OPTIONS) overrides: Partial<WebhookDispatchOptions> | null,
    @Optional() @Inject(WebhookFanOutService) fanOut: WebhookFanOutService | null,
  ) {
    this.options = { ...dispatchOptionsFromConfig(config), ...overrides };
    this.allowed = addressAllowList(this.options.allowedAddresses);
    this.queueRounds = this.options.attemptTimeoutMs * (QUEUE_ROUNDS + 1) * 2 <= this.options.leaseMs ? QUEUE_ROUNDS : 0;
    this.limits = new WebhookLimits({
      floor: this.options.perWebhookConcurrency,
      cap: Math.max(this.options.perWebhookConcurrency, this.options.maxPerWebhookConcurrency),
      globalConcurrency: this.options.globalConcurrency,
      queueRounds: this.queueRounds,
    });
    this.connections = new EndpointConnections({
      ...DEFAULT_ENDPOINT_CONNECTIONS,
      maxSocketsPerAddress: Math.max(1, this.options.globalConcurrency),
    });
    this.outcomes = new GroupCommit({ maxInFlight: RECORD_BATCHES_IN_FLIGHT, maxItems: RECORD_BATCH_MAX }, async (batch) => {
      await this.messages.recordAttempts(batch, this.options.disableAfterMs).catch((error: unknown) => {
        // Recorded but for their webhooks' health: not to be retried (their attempts would be recorded twice).
        if (!(error instanceof WebhookHealthNotRecordedError)) throw error;
        this.logger.warn(error.message);
      });
      return batch.map(() => null);
    });
    fanOut?.onFannedOut(() => this.wake());
    this.job = new PeriodicJob(
      () => this.poll(),
      () => this.options.pollIntervalMs,
      (error) => this.logger.warn(`webhook poll failed: ${error.message}`),
    );
  }

  onApplicationBootstrap(): void {
    this.job.start();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    await this.job.stop();
    await Promise.allSettled([...this.releasing]);
    const unstarted = [...this.queues.values()].flat().map((m) => m.id);
    this.queues.clear();
    this.queued = 0;
    if (unstarted.length > 0) {
      await this.claims.releaseClaims(unstarted).catch((error: Error) => this.logger.warn(`webhook claims not released: ${error.message}`));
    }
    await Promise.allSettled([...this.inFlight]);
    this.connections.close();
  }

  /** Claims what the free slots and queues allow and starts what it can; returns how many it claimed. */
  async poll(): Promise<number> {
    const free = this.options.globalConcurrency - this.inFlight.size - this.queued;
    if (free <= 0) return 0;
    const now = performance.now();
    if (now - this.limitsSweptAt >= LIMIT_SWEEP_MS) {
      this.limitsSweptAt = now;
      this.limits.sweep(now, (webhookId) => this.active.has(webhookId) || this.queues.has(webhookId));
    }
    if (now - this.discoveredAt >= DISCOVER_MS) {
      this.discoveredAt = now;
      const found = await this.claims.webhooksWithDueMessages(DISCOVER_MAX);
      this.discovered = found.due;
      this.stopped = new Set(found.stopped);
    }
    const held = new Map<string, number>(this.active);
    for (const [webhookId, queue] of this.queues) held.set(webhookId, (held.get(webhookId) ?? 0) + queue.length);
    const { floorQuota, busy, own } = this.limits.claimShape(held, this.discovered);
    this.discovered = [];
    const live = own.filter((webhookId) => !this.stopped.has(webhookId));
    if (this.stranded.length > 0) {
      await this.claims.releaseClaims(this.stranded);
      this.stranded = [];
    }
    const { due, stopped } = await this.claims
      .claimDue(free, this.options.leaseMs, floorQuota, busy, live, [...this.stopped])
      .catch((error: unknown) => {
        if (!(error instanceof StrandedClaimsError)) throw error;
        // Hidden until their lease ends (minutes) otherwise; Postgres went away between two statements.
        this.stranded.push(...error.ids);
        throw error.cause;
      });
    stopped.forEach((webhookId) => this.stopped.add(webhookId));
    if (this.job.isStopped) {
      await this.claims.releaseClaims(due.map((m) => m.id));
      return 0;
    }
    const touched = new Set<string>();
    for (const message of due) {
      const queue = this.queues.get(message.webhookId) ?? [];
      queue.push(message);
      this.queues.set(message.webhookId, queue);
      this.queued++;
      touched.add(message.webhookId);
    }
    touched.forEach((webhookId) => this.pump(webhookId));
    return due.length;
  }

  /**
   * A freed slot: look for due messages again within a few milliseconds instead of at the next
   * poll, coalescing the wake-ups of deliveries that finish together (and of fan-outs).
   */
  wake(): void {
    if (this.wakeTimer || this.job.isStopped) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.job.runOnce().catch((error: Error) => this.logger.warn(`webhook poll failed: ${error.message}`));
    }, WAKE_DELAY_MS);
  }

  /** Requests the webhook may have in flight now. */
  limitOf(webhookId: string): number {
    return this.limits.limitOf(webhookId);
  }

  /**
   * The endpoint answered (or failed to): adapt its limit. After a cut, the queue keeps only
   * rounds of the new limit and hands the rest back (due again at once), so no claim waits
   * behind the slower pace longer than its lease.
   */
  private observe(webhookId: string, result: HttpAttemptResult, startedAt: number): void {
    const before = this.limits.limitOf(webhookId);
    const queue = this.queues.get(webhookId);
    const saturated = (this.active.get(webhookId) ?? 0) + (queue?.length ?? 0) >= before;
    const now = performance.now();
    const after = this.limits.observe(webhookId, { signal: capacitySignal(result), startedAt, latencyMs: now - startedAt, saturated }, now);
    if (after >= before || !queue || queue.length <= after * this.queueRounds) return;
    const excess = queue.splice(after * this.queueRounds).map((m) => m.id);
    this.queued -= excess.length;
    if (queue.length === 0) this.queues.delete(webhookId);
    const released = this.claims
      .releaseClaims(excess)
      .catch((error: Error) => this.logger.warn(`webhook claims not released: ${error.message}`))
      .finally(() => this.releasing.delete(released));
    this.releasing.add(released);
  }

  /** Starts the webhook's queued messages its free slots allow. */
  private pump(webhookId: string): void {
    const queue = this.queues.get(webhookId);
    while (queue && queue.length > 0 && (this.active.get(webhookId) ?? 0) < this.limitOf(webhookId)) {
      this.queued--;
      this.start(queue.shift()!);
    }
    if (queue && queue.length === 0) this.queues.delete(webhookId);
  }

  private start(message: DueMessage): void {
    this.active.set(message.webhookId, (this.active.get(message.webhookId) ?? 0) + 1);
    let answered = false;
    // The webhook's slot is free once its endpoint has answered; the global one once the outcome is recorded.
    const release = () => {
      if (answered) return;
      answered = true;
      const left = (this.active.get(message.webhookId) ?? 1) - 1;
      if (left > 0) this.active.set(message.webhookId, left);
      else this.active.delete(message.webhookId);
      this.pump(message.webhookId);
      this.wake();
    };
    const run = this.deliver(message, release)
      .catch((error: Error) => this.logger.warn(`webhook message ${message.id} attempt not recorded: ${error.message}`))
      .finally(() => {
        this.inFlight.delete(run);
        release();
        this.wake();
      });
    this.inFlight.add(run);
  }

  /** One attempt: sign, POST, record the attempt and the message's new state. */
  private async deliver(message: DueMessage, answered: () => void): Promise<void> {
    const sentAt = heraldClock.now();
    const startedAt = performance.now();
    const body = JSON.stringify(message.payload);
    const result = await postWebhook({
      endpoint: message.endpoint,
      headers: signedHeaders(message, body, sentAt),
      body,
      timeoutMs: this.options.attemptTimeoutMs,
      allowHttp: this.options.allowHttp,
      allowed: this.allowed,
      connections: this.connections,
    });
    this.observe(message.webhookId, result, startedAt);
    answered();
    const attempt = message.attempts + 1;
    const settlement = settle(result, attempt, this.options, heraldClock.now());
    await this.record({
      message,
      attempt: {
        messageId: message.id,
        attempt,
        statusCode: result.kind === 'response' ? result.statusCode : null,
        error: result.kind === 'response' ? null : result.error,
        responseExcerpt: result.kind === 'response' ? result.excerpt : '',
        durationMs: result.durationMs,
        sentAt,
      },
      settlement,
    });
  }

  /**
   * Records an attempt's outcome, retrying while Postgres cannot be reached (a restart, a
   * failover): the endpoint has had the message, and an outcome left unrecorded sends it again
   * once its lease ends. Gives up after RECORD_RETRY_MS, at most half the lease (the lease then
   * decides), or when the dispatcher stops.
   */
  private async record(outcome: AttemptOutcome): Promise<void> {
    const giveUpAt = performance.now() + Math.min(RECORD_RETRY_MS, this.options.leaseMs / 2);
    for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 4_000)) {
      try {
        await this.outcomes.submit(outcome);
        return;
      } catch (error) {
        if (!isPostgresUnreachable(error) || this.job.isStopped || performance.now() + delayMs > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }
}
