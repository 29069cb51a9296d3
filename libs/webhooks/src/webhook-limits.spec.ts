import { LIMIT_IDLE_MS, WebhookLimits } from './webhook-limits';

const options = { floor: 4, cap: 64, globalConcurrency: 96, queueRounds: 2 };
const success = (t: number) => ({ signal: 'success' as const, saturated: true, latencyMs: 5, startedAt: t - 5 });

/** `n` saturated successes of the webhook's endpoint from time `t`. */
function grow(limits: WebhookLimits, webhookId: string, n: number, t = 1): void {
  for (let i = 0; i < n; i++) limits.observe(webhookId, success(t + i), t + i);
}

describe('WebhookLimits', () => {
  it('gives an unknown webhook the floor, and the floor’s rounds to hold', () => {
    const limits = new WebhookLimits(options);
    expect(limits.limitOf('a')).toBe(4);
    expect(limits.quota('a', 1)).toBe(12);
  });

  it('lets a webhook that adapted upwards hold rounds of its limit, within an equal share with one kept for a newcomer', () => {
    const limits = new WebhookLimits(options);
    grow(limits, 'a', 6);
    expect(limits.limitOf('a')).toBe(10);
    expect(limits.quota('a', 1)).toBe(30);
    grow(limits, 'a', 100);
    expect(limits.limitOf('a')).toBe(64);
    // Alone: half of the 96 slots; beside one other: a third; beside many: never below the floor's 12.
    expect(limits.quota('a', 1)).toBe(48);
    expect(limits.quota('a', 2)).toBe(32);
    expect(limits.quota('a', 20)).toBe(12);
  });

  it('shapes the claim: quotas other than the floor’s as offsets, and busy or found webhooks with quota left read by their own index', () => {
    const limits = new WebhookLimits(options);
    grow(limits, 'fast', 100);
    grow(limits, 'grown', 10);
    limits.observe('occasional', { ...success(1), saturated: false }, 1);
    const shape = limits.claimShape(
      new Map([
        ['fast', 20],
        ['slow', 12],
        ['waiting', 3],
      ]),
      ['new', 'slow'],
    );
    expect(shape.floorQuota).toBe(12);
    // Three webhooks hold messages: fast may hold a quarter (24), holds 20 → passed as holding 20 − (24 − 12) = 8, i.e. 4 more;
    // grown (limit 14, holding nothing: it would be the fourth) may hold a fifth (19) → −7; slow holds its 12; waiting 3 of 12.
    expect(Object.fromEntries(shape.busy)).toEqual({ fast: 8, grown: -7, slow: 12, waiting: 3 });
    // Not `occasional`: delivered to lately, at the floor and holding nothing (the window and discovery find it).
    expect(shape.own.sort()).toEqual(['fast', 'grown', 'new', 'waiting']);
  });

  it('forgets limits idle for a minute unless their webhook still holds messages', () => {
    const limits = new WebhookLimits(options);
    grow(limits, 'a', 10);
    grow(limits, 'b', 10);
    limits.sweep(LIMIT_IDLE_MS, () => false);
    expect(limits.size).toBe(2);
    limits.sweep(LIMIT_IDLE_MS + 100, (id) => id === 'b');
    expect(limits.size).toBe(1);
    expect(limits.limitOf('a')).toBe(4);
    expect(limits.limitOf('b')).toBe(14);
  });
});
