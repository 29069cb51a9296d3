/**
 * The dispatcher's knobs. Defaults are the production values; a test (or, later, config) provides
 * WEBHOOK_DISPATCH_OPTIONS with overrides, e.g. a compressed retry schedule.
 * Wanted as config: WEBHOOK_RETRY_SCHEDULE, WEBHOOK_ATTEMPT_TIMEOUT_MS,
 * WEBHOOK_CONCURRENCY(_PER_ENDPOINT), WEBHOOK_ALLOWED_ADDRESSES.
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
  /** Deliveries in flight per process, and per webhook per process (so one slow endpoint holds a few slots at most). */
  globalConcurrency: number;
  perWebhookConcurrency: number;
  /** How long a claimed message is hidden from other dispatchers; longer than an attempt can take. */
  leaseMs: number;
  /** The longest `Retry-After` honoured. */
  maxRetryAfterMs: number;
  /** Allow loopback endpoints (127.0.0.0/8, ::1, localhost); the module default is NODE_ENV !== 'production'. */
  allowLoopback?: boolean;
}

export const DEFAULT_DISPATCH_OPTIONS: WebhookDispatchOptions = {
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  attemptTimeoutMs: 15 * SECOND,
  pollIntervalMs: 200,
  globalConcurrency: 256,
  perWebhookConcurrency: 4,
  leaseMs: 2 * MINUTE,
  maxRetryAfterMs: 24 * HOUR,
};

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
