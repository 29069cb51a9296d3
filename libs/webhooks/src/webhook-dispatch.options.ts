import type { WebhooksConfig } from './webhooks.config';

/**
 * The dispatcher's knobs. The config (WEBHOOK_*) gives them; a test may still provide
 * WEBHOOK_DISPATCH_OPTIONS with overrides, e.g. a compressed retry schedule in milliseconds.
 */
export const WEBHOOK_DISPATCH_OPTIONS = Symbol('WEBHOOK_DISPATCH_OPTIONS');

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Resend's schedule (API.md §9.2): the delay before each attempt, measured from the previous failure. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];

export interface WebhookDispatchOptions {
  /** Delay before attempt i+1; its length is the number of attempts. */
  retryScheduleMs: readonly number[];
  /** A 2xx within this long is a success (Resend's docs leave it open; Svix uses 15 s). */
  attemptTimeoutMs: number;
  /** How often the dispatcher looks for due messages. */
  pollIntervalMs: number;
  /** Deliveries in flight per process (claimed and not yet recorded). */
  globalConcurrency: number;
  /**
   * Requests in flight per webhook per process: each starts at `perWebhookConcurrency` and adapts
   * (AdaptiveConcurrency) up to `maxPerWebhookConcurrency` while its endpoint keeps up.
   */
  perWebhookConcurrency: number;
  maxPerWebhookConcurrency: number;
  /** How long a claimed message is hidden from other dispatchers; longer than an attempt can take. */
  leaseMs: number;
  /** The longest `Retry-After` honoured. */
  maxRetryAfterMs: number;
  /** Deliver to http:// endpoints (WEBHOOK_ALLOW_HTTP); refused otherwise. */
  allowHttp: boolean;
  /** IPs / CIDRs the SSRF guard lets through although private or loopback (WEBHOOK_ALLOWED_ADDRESSES). */
  allowedAddresses: readonly string[];
  /** An endpoint whose every attempt has failed for this long is disabled (Resend: 5 days). */
  disableAfterMs: number;
}

export const DEFAULT_DISPATCH_OPTIONS: WebhookDispatchOptions = {
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  attemptTimeoutMs: 15 * SECOND,
  pollIntervalMs: 200,
  globalConcurrency: 256,
  perWebhookConcurrency: 4,
  maxPerWebhookConcurrency: 64,
  leaseMs: 2 * MINUTE,
  maxRetryAfterMs: 24 * HOUR,
  allowHttp: false,
  allowedAddresses: [],
  disableAfterMs: 5 * 24 * HOUR,
};

/** The options the config gives (the rest keep their defaults). */
export function dispatchOptionsFromConfig(config: WebhooksConfig): WebhookDispatchOptions {
  return {
    ...DEFAULT_DISPATCH_OPTIONS,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE.map((seconds) => seconds * SECOND),
    attemptTimeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
    globalConcurrency: config.WEBHOOK_CONCURRENCY,
    perWebhookConcurrency: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    maxPerWebhookConcurrency:
      config.WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT ??
      Math.max(DEFAULT_DISPATCH_OPTIONS.maxPerWebhookConcurrency, config.WEBHOOK_CONCURRENCY_PER_ENDPOINT),
    allowHttp: config.WEBHOOK_ALLOW_HTTP,
    allowedAddresses: config.WEBHOOK_ALLOWED_ADDRESSES,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_HOURS * HOUR,
  };
}

/**
 * When attempt `attemptsMade + 1` is due after `attemptsMade` failures, or null when none is
 * left. ±10% jitter spreads retries of a failed endpoint; a longer `Retry-After` wins.
 */
export function nextRetryDelayMs(
  options: Pick<WebhookDispatchOptions, 'retryScheduleMs' | 'maxRetryAfterMs'>,
  attemptsMade: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  const base = options.retryScheduleMs[attemptsMade];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, options.maxRetryAfterMs));
}

/** `Retry-After` in seconds (HTTP dates are rare from webhook receivers and ignored). */
export function parseRetryAfter(value: string | undefined): number | null {
  if (!value || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim()) * 1000;
}
