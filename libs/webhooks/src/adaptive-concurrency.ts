import type { HttpAttemptResult } from './webhook-http.client';

/**
 * What an attempt says about its endpoint's capacity: `success` (a 2xx), `overload` (a timeout,
 * a connection error, a 5xx or a 429: the endpoint or the way to it is struggling) or `neutral`
 * (a 3xx/4xx or a request refused before it left: says nothing about load).
 */
export type CapacitySignal = 'success' | 'overload' | 'neutral';

export function capacitySignal(result: HttpAttemptResult): CapacitySignal {
  if (result.kind === 'refused') return 'neutral';
  if (result.kind === 'error') return 'overload';
  if (result.statusCode >= 200 && result.statusCode < 300) return 'success';
  if (result.statusCode === 429 || result.statusCode >= 500) return 'overload';
  return 'neutral';
}

export interface AttemptObservation {
  signal: CapacitySignal;
  /** When the request was sent and how long its answer took (milliseconds, one monotonic clock). */
  startedAt: number;
  latencyMs: number;
  /** Whether the endpoint's limit was in use when it answered: all its slots busy, or messages waiting for one. */
  saturated: boolean;
}

export interface AdaptiveConcurrencyOptions {
  /** Where every endpoint starts and the least it is ever given (WEBHOOK_CONCURRENCY_PER_ENDPOINT). */
  floor: number;
  /** The most it is ever given (WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT). */
  cap: number;
}

/** Each overload keeps this share of the limit (TCP's halving). */
const BACKOFF = 0.5;
/** Growth stops while recent latency exceeds TOLERANCE × the baseline + SLACK_MS (loopback-scale latencies are mostly noise). */
const LATENCY_TOLERANCE = 2;
const LATENCY_SLACK_MS = 10;
/** Weight of the newest answer in the recent latency. */
const LATENCY_EWMA = 0.1;
/** The baseline is the least latency seen over the last one to two of these. */
const BASELINE_WINDOW_MS = 15_000;

/**
 * One endpoint's concurrency limit, adapted to how it answers: AIMD with a latency guard, as TCP
 * Reno's congestion window is (a busy, healthy endpoint gets its events promptly, as from Svix).
 *
 * - It starts at `floor`. While the endpoint answers 2xx with the limit in use (a backlog is
 *   waiting) and its recent latency (an EWMA) stays within 2× + 10 ms of its baseline (the least
 *   latency of the last 15–30 s), the limit grows: by one per success at first (slow start: it
 *   doubles each round of answers), then, once anything has held it back, by one per round
 *   (1/limit per success), up to `cap`.
 * - A climbing latency only stops the growth (and ends slow start): the endpoint is queueing our
 *   requests, more of them would add delay, not throughput.
 * - A timeout, connection error, 5xx or 429 halves it (not below `floor`), once per round: the
 *   requests already in flight when it was cut were sent at the old limit, so their failures are
 *   the same congestion event and do not cut it again.
 * - Successes while the limit is not in use do not grow it: an endpoint that is not pressed says
 *   nothing about what more it could take.
 *
 * Pure: it is given each observation and the time, and holds no timers.
 */
export class AdaptiveConcurrency {
  private window: number;
  private slowStart = true;
  private lastCutAt = -Infinity;
  private recentLatency: number | null = null;
  private baselineStartedAt: number;
  private baselineCurrent = Infinity;
  private baselinePrevious = Infinity;
  /** When it last saw an answer (the dispatcher forgets limits idle for long). */
  lastObservedAt: number;

  constructor(
    private readonly options: AdaptiveConcurrencyOptions,
    now: number,
  ) {
    if (options.floor < 1 || options.cap < options.floor) throw new Error(`bad concurrency bounds ${options.floor}..${options.cap}`);
    this.window = options.floor;
    this.baselineStartedAt = now;
    this.lastObservedAt = now;
  }

  /** Requests the endpoint may have in flight now. */
  get limit(): number {
    return Math.floor(this.window);
  }

  /** The least recent latency, or null before the first success. */
  get baselineMs(): number | null {
    const least = Math.min(this.baselineCurrent, this.baselinePrevious);
    return Number.isFinite(least) ? least : null;
  }

  /** Takes one finished attempt into account; returns the new limit. */
  observe(o: AttemptObservation, now: number): number {
    this.lastObservedAt = now;
    if (o.signal === 'overload') this.cut(o.startedAt, now);
    else if (o.signal === 'success') this.succeeded(o, now);
    return this.limit;
  }

  private cut(startedAt: number, now: number): void {
    this.slowStart = false;
    if (startedAt < this.lastCutAt) return;
    this.window = Math.max(this.options.floor, this.window * BACKOFF);
    this.lastCutAt = now;
  }

  private succeeded(o: AttemptObservation, now: number): void {
    this.sampleLatency(o.latencyMs, now);
    if (!o.saturated || this.window >= this.options.cap) return;
    if (this.recentLatency! > this.baselineMs! * LATENCY_TOLERANCE + LATENCY_SLACK_MS) {
      this.slowStart = false;
      return;
    }
    this.window = Math.min(this.options.cap, this.window + (this.slowStart ? 1 : 1 / this.window));
  }

  private sampleLatency(latencyMs: number, now: number): void {
    if (now - this.baselineStartedAt >= BASELINE_WINDOW_MS) {
      this.baselinePrevious = this.baselineCurrent;
      this.baselineCurrent = Infinity;
      this.baselineStartedAt = now;
    }
    this.baselineCurrent = Math.min(this.baselineCurrent, latencyMs);
    this.recentLatency = this.recentLatency === null ? latencyMs : this.recentLatency + LATENCY_EWMA * (latencyMs - this.recentLatency);
  }
}
