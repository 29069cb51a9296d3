import { HeraldConfig } from '@herald/config';
import type { RateLimitConfig } from './limits.config';

/**
 * The plan tiers of the specification (§8), by monthly email volume. Every To/Cc/Bcc recipient
 * counts as one email. Only the free plan has a daily cap, as at Resend.
 */
export const PLAN_IDS = ['free', 'pro-50k', 'pro-100k', 'scale-200k', 'scale-500k', 'scale-1m', 'scale-1.5m', 'scale-2.5m'] as const;

export type PlanId = (typeof PLAN_IDS)[number];

export interface Plan {
  readonly id: PlanId;
  readonly monthlyEmails: number;
  readonly priceUsd: number;
  /** Emails per UTC day, or null when the plan has no daily cap. */
  readonly dailyEmails: number | null;
}

/** The free plan's daily cap when no configuration is given; FREE_DAILY_LIMIT overrides it. */
export const DEFAULT_FREE_DAILY_LIMIT = 100;

/**
 * The catalogue with the default free daily cap. Quota enforcement goes through `planById(id,
 * config)` so that an operator's FREE_DAILY_LIMIT applies.
 */
export const PLANS: readonly Plan[] = Object.freeze(
  [
    { id: 'free', monthlyEmails: 3_000, priceUsd: 0, dailyEmails: DEFAULT_FREE_DAILY_LIMIT },
    { id: 'pro-50k', monthlyEmails: 50_000, priceUsd: 20, dailyEmails: null },
    { id: 'pro-100k', monthlyEmails: 100_000, priceUsd: 35, dailyEmails: null },
    { id: 'scale-200k', monthlyEmails: 200_000, priceUsd: 160, dailyEmails: null },
    { id: 'scale-500k', monthlyEmails: 500_000, priceUsd: 350, dailyEmails: null },
    { id: 'scale-1m', monthlyEmails: 1_000_000, priceUsd: 650, dailyEmails: null },
    // The spec gives both $825 and $1,250 here; $1,250 would cost more than the 2.5M plan.
    { id: 'scale-1.5m', monthlyEmails: 1_500_000, priceUsd: 825, dailyEmails: null },
    { id: 'scale-2.5m', monthlyEmails: 2_500_000, priceUsd: 1_050, dailyEmails: null },
  ].map((plan) => Object.freeze(plan as Plan)),
);

const BY_ID = new Map<string, Plan>(PLANS.map((plan) => [plan.id, plan]));

export function isPlanId(value: unknown): value is PlanId {
  return typeof value === 'string' && BY_ID.has(value);
}

/**
 * The plan with that id, with the configured free daily cap when `config` is given. A team's
 * plan is stored as text, so an unknown id yields undefined rather than a guess.
 */
export function planById(id: PlanId, config?: Pick<HeraldConfig, 'FREE_DAILY_LIMIT'>): Plan;
export function planById(id: string, config?: Pick<HeraldConfig, 'FREE_DAILY_LIMIT'>): Plan | undefined;
export function planById(id: string, config?: Pick<HeraldConfig, 'FREE_DAILY_LIMIT'>): Plan | undefined {
  const plan = BY_ID.get(id);
  if (!plan || plan.dailyEmails === null || !config) return plan;
  return Object.freeze({ ...plan, dailyEmails: config.FREE_DAILY_LIMIT });
}

/**
 * Requests per second allowed for a team: its own override (raised on request, as at Resend),
 * else the operator's per-plan setting, else the default.
 */
export function rateLimitFor(plan: PlanId, config: RateLimitConfig, teamOverride: number | null): number {
  if (teamOverride !== null) {
    if (!Number.isInteger(teamOverride) || teamOverride < 1) {
      throw new RangeError(`a team rate limit must be a positive integer, got ${teamOverride}`);
    }
    return teamOverride;
  }
  return config.RATE_LIMIT_PLANS[plan] ?? config.RATE_LIMIT_DEFAULT;
}
