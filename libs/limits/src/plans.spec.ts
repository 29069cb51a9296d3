import { loadConfig } from '@herald/config';
import { isPlanId, PLAN_IDS, planById, PLANS, rateLimitFor } from './plans';

describe('plans', () => {
  it('lists the tiers of the spec, cheapest first, with $825 at 1.5M', () => {
    expect(PLANS.map((p) => [p.id, p.monthlyEmails, p.priceUsd])).toEqual([
      ['free', 3_000, 0],
      ['pro-50k', 50_000, 20],
      ['pro-100k', 100_000, 35],
      ['scale-200k', 200_000, 160],
      ['scale-500k', 500_000, 350],
      ['scale-1m', 1_000_000, 650],
      ['scale-1.5m', 1_500_000, 825],
      ['scale-2.5m', 2_500_000, 1_050],
    ]);
    expect(PLANS.map((p) => p.id)).toEqual([...PLAN_IDS]);
  });

  it('never charges more for a smaller plan', () => {
    for (let i = 1; i < PLANS.length; i++) {
      expect(PLANS[i].monthlyEmails).toBeGreaterThan(PLANS[i - 1].monthlyEmails);
      expect(PLANS[i].priceUsd).toBeGreaterThan(PLANS[i - 1].priceUsd);
    }
  });

  it('caps only the free plan per day, at FREE_DAILY_LIMIT', () => {
    expect(planById('free').dailyEmails).toBe(100);
    expect(planById('free', loadConfig({ FREE_DAILY_LIMIT: '250' })).dailyEmails).toBe(250);
    for (const id of PLAN_IDS.filter((id) => id !== 'free')) {
      expect(planById(id, loadConfig({})).dailyEmails).toBeNull();
    }
  });

  it('recognizes plan ids and nothing else', () => {
    expect(isPlanId('scale-1.5m')).toBe(true);
    expect(isPlanId('enterprise')).toBe(false);
    expect(isPlanId(undefined)).toBe(false);
    expect(planById('enterprise')).toBeUndefined();
  });

  it('keeps the catalogue immutable', () => {
    expect(() => {
      (PLANS[0] as { priceUsd: number }).priceUsd = 1;
    }).toThrow(TypeError);
  });
});

describe('rateLimitFor', () => {
  const config = loadConfig({ RATE_LIMIT_PLANS: 'scale-1m=100' });

  it('prefers the team override', () => {
    expect(rateLimitFor('scale-1m', config, 7)).toBe(7);
  });

  it('falls back to the plan setting, then the default', () => {
    expect(rateLimitFor('scale-1m', config, null)).toBe(100);
    expect(rateLimitFor('free', config, null)).toBe(10);
    expect(rateLimitFor('free', loadConfig({ RATE_LIMIT_DEFAULT: '3' }), null)).toBe(3);
  });

  it('rejects an override that is not a positive integer', () => {
    expect(() => rateLimitFor('free', config, 0)).toThrow(RangeError);
    expect(() => rateLimitFor('free', config, 1.5)).toThrow(RangeError);
  });
});
