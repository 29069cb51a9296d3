import { AdaptiveConcurrency, type AttemptObservation } from './adaptive-concurrency';

export interface WebhookLimitsOptions {
  /** Every webhook's starting and least limit, and its most. */
  floor: number;
  cap: number;
  /** Messages claimed and not yet recorded, per process. */
  globalConcurrency: number;
  /** Rounds of its limit a webhook may hold queued behind its requests in flight. */
  queueRounds: number;
}

/** What the claim of due messages is given: see WebhookMessagesRepository.claimDue. */
export interface ClaimShape {
  /** Every webhook's quota unless `busy` says otherwise. */
  floorQuota: number;
  /** Per webhook: what it holds less what its quota exceeds the floor's by (negative for one whose quota is higher). */
  busy: Map<string, number>;
  /**
   * The webhooks with quota left to read by their own due index: those holding messages or whose
   * limit grew (each a backlog being worked), and those just found with due messages. A webhook
   * delivered to now and then is left to the window of oldest messages (and to discovery), so the
   * claim does not probe every webhook of the last minute.
   */
  own: string[];
}

/** A webhook's limit is forgotten (it starts again at the floor) after this long without an answer. */
export const LIMIT_IDLE_MS = 60_000;

/**
 * The dispatcher's per-webhook concurrency: one AdaptiveConcurrency for each webhook it has
 * delivered to lately, and how many messages each may hold (in flight + queued): rounds of its
 * limit, but no more than an equal share of the process's slots among the webhooks holding some,
 * with one share kept free for a newcomer, and never less than the floor's rounds. So an endpoint
 * that adapted upwards, even a slow one that keeps up, cannot take the slots of the others.
 */
export class WebhookLimits {
  private readonly limits = new Map<string, AdaptiveConcurrency>();

  constructor(private readonly options: WebhookLimitsOptions) {}

  /** Requests the webhook may have in flight now. */
  limitOf(webhookId: string): number {
    return this.limits.get(webhookId)?.limit ?? this.options.floor;
  }

  /** Takes an answer of the webhook's endpoint into account; returns its new limit. */
  observe(webhookId: string, observation: AttemptObservation, now: number): number {
    let limiter = this.limits.get(webhookId);
    if (!limiter) this.limits.set(webhookId, (limiter = new AdaptiveConcurrency({ floor: this.options.floor, cap: this.options.cap }, now)));
    return limiter.observe(observation, now);
  }

  /** Messages the webhook may hold when `holding` webhooks (itself included) hold some. */
  quota(webhookId: string, holding: number): number {
    const rounds = 1 + this.options.queueRounds;
    const share = Math.floor(this.options.globalConcurrency / (holding + 1));
    return Math.max(this.options.floor * rounds, Math.min(this.limitOf(webhookId) * rounds, share));
  }

  /** The claim's quotas, given what each webhook holds now, and other webhooks known to have due messages. */
  claimShape(held: ReadonlyMap<string, number>, discovered: Iterable<string> = []): ClaimShape {
    const floorQuota = this.options.floor * (1 + this.options.queueRounds);
    const busy = new Map<string, number>();
    const own: string[] = [];
    const found = new Set(discovered);
    for (const webhookId of new Set([...held.keys(), ...this.limits.keys(), ...found])) {
      const holds = held.get(webhookId) ?? 0;
      const quota = this.quota(webhookId, held.has(webhookId) ? held.size : held.size + 1);
      if (quota !== floorQuota || holds > 0) busy.set(webhookId, holds - (quota - floorQuota));
      if (holds < quota && (holds > 0 || this.limitOf(webhookId) > this.options.floor || found.has(webhookId))) own.push(webhookId);
    }
    return { floorQuota, busy, own };
  }

  /** Forgets the limits of webhooks that hold nothing and have not been heard from for LIMIT_IDLE_MS. */
  sweep(now: number, holds: (webhookId: string) => boolean): void {
    for (const [webhookId, limiter] of this.limits) {
      if (now - limiter.lastObservedAt > LIMIT_IDLE_MS && !holds(webhookId)) this.limits.delete(webhookId);
    }
  }

  get size(): number {
    return this.limits.size;
  }
}
