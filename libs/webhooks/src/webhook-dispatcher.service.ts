import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { PeriodicJob } from '@herald/core';
import { CONFIG, HeraldConfig } from '@herald/config';
import { type AddressAllowList, addressAllowList } from './endpoint-address';
import { dispatchOptionsFromConfig, nextRetryDelayMs, parseRetryAfter, WEBHOOK_DISPATCH_OPTIONS, WebhookDispatchOptions } from './webhook-dispatch.options';
import { HttpAttemptResult, postWebhook } from './webhook-http.client';
import { DueMessage, MessageSettlement, WebhookMessagesRepository } from './webhook-messages.repository';
import { signingSecrets, signPayload } from './webhook-secrets';

/** Both header families (Standard Webhooks and Svix), one `v1,` signature per secret valid now. */
export function signedHeaders(message: Pick<DueMessage, 'id' | 'signingSecret' | 'previousSecret' | 'previousSecretExpiresAt'>, body: string, now: Date): Record<string, string> {
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

/**
 * Polls due webhook messages and POSTs them, concurrently: at most `globalConcurrency` in
 * flight and `perWebhookConcurrency` per webhook, so a slow endpoint only ever holds its own
 * slots. Shutdown stops polling and waits for the attempts in flight.
 */
const WAKE_DELAY_MS = 5;

@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly options: WebhookDispatchOptions;
  private readonly allowed: AddressAllowList;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perWebhook = new Map<string, number>();
  private readonly job: PeriodicJob;
  private wakeTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly messages: WebhookMessagesRepository,
    @Inject(CONFIG) config: HeraldConfig,
    @Optional() @Inject(WEBHOOK_DISPATCH_OPTIONS) overrides: Partial<WebhookDispatchOptions> | null,
  ) {
    this.options = { ...dispatchOptionsFromConfig(config), ...overrides };
    this.allowed = addressAllowList(this.options.allowedAddresses);
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
    await Promise.allSettled([...this.inFlight]);
  }

  /** Claims what the free slots allow and starts those deliveries; returns how many started. */
  async poll(): Promise<number> {
    const free = this.options.globalConcurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const slots = (webhookId: string) => this.options.perWebhookConcurrency - (this.perWebhook.get(webhookId) ?? 0);
    const due = await this.messages.claimDue(free, this.options.leaseMs, slots);
    due.forEach((message) => this.start(message));
    return due.length;
  }

  /**
   * A finished delivery frees a slot: look for due messages again within a few milliseconds
   * instead of at the next poll, coalescing the wake-ups of deliveries that finish together.
   * Without it a busy endpoint gets at most perWebhookConcurrency deliveries per poll interval.
   */
  private wake(): void {
    if (this.wakeTimer || this.job.isStopped) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.job.runOnce().catch((error: Error) => this.logger.warn(`webhook poll failed: ${error.message}`));
    }, WAKE_DELAY_MS);
  }

  private start(message: DueMessage): void {
    this.perWebhook.set(message.webhookId, (this.perWebhook.get(message.webhookId) ?? 0) + 1);
    const run = this.deliver(message)
      .catch((error: Error) => this.logger.warn(`webhook message ${message.id} attempt not recorded: ${error.message}`))
      .finally(() => {
        this.inFlight.delete(run);
        const left = (this.perWebhook.get(message.webhookId) ?? 1) - 1;
        if (left > 0) this.perWebhook.set(message.webhookId, left);
        else this.perWebhook.delete(message.webhookId);
        this.wake();
      });
    this.inFlight.add(run);
  }

  /** One attempt: sign, POST, record the attempt and the message's new state. */
  private async deliver(message: DueMessage): Promise<void> {
    const sentAt = new Date();
    const body = JSON.stringify(message.payload);
    const result = await postWebhook({
      endpoint: message.endpoint,
      headers: signedHeaders(message, body, sentAt),
      body,
      timeoutMs: this.options.attemptTimeoutMs,
      allowHttp: this.options.allowHttp,
      allowed: this.allowed,
    });
    const attempt = message.attempts + 1;
    const settlement = settle(result, attempt, this.options, new Date());
    await this.messages.recordAttempt(
      message,
      {
        messageId: message.id,
        attempt,
        statusCode: result.kind === 'response' ? result.statusCode : null,
        error: result.kind === 'response' ? null : result.error,
        responseExcerpt: result.kind === 'response' ? result.excerpt : '',
        durationMs: result.durationMs,
        sentAt,
      },
      settlement,
    );
  }
}
