import { judge } from './guardrail';
import { zeroCounts, type Counts } from './rollup-counts';

const LIMITS = { bounceRate: 0.04, complaintRate: 0.003, minSent: 100 };
const window = (c: Partial<Counts>): Counts => ({ ...zeroCounts(), ...c });

describe('judge (the reputation guardrail)', () => {
  it('pauses a domain whose bounce rate passes 4%', () => {
    expect(judge(window({ sent: 1000, delivered: 950, bounced_hard: 30, bounced_soft: 11 }), LIMITS)).toEqual({
      reason: 'bounce_rate',
      rate: 0.041,
      threshold: 0.04,
      sent: 1000,
      windowHours: 24,
    });
  });

  it('lets a bounce rate of exactly 4% through: the limit is passed, not met', () => {
    expect(judge(window({ sent: 1000, delivered: 960, bounced_hard: 40 }), LIMITS)).toBeNull();
  });

  it('pauses on complaints over delivered past 0.3%', () => {
    expect(judge(window({ sent: 1000, delivered: 1000, complained: 4 }), LIMITS)).toMatchObject({ reason: 'complaint_rate', rate: 0.004 });
    expect(judge(window({ sent: 1000, delivered: 1000, complained: 3 }), LIMITS)).toBeNull();
  });

  it('judges nothing below the minimum volume', () => {
    expect(judge(window({ sent: 99, bounced_hard: 99 }), LIMITS)).toBeNull();
  });
});
