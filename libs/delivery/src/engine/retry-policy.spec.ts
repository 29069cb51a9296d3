import { nextAttemptAt } from './retry-policy';

const policy = { scheduleSeconds: [60, 300, 3600], expirySeconds: 4 * 3600 };
const due = new Date('2026-11-26T00:00:00Z');
const at = (seconds: number) => new Date(due.getTime() + seconds * 1000);

describe('nextAttemptAt', () => {
  it('follows the schedule attempt by attempt, repeating its last step', () => {
    expect(nextAttemptAt(policy, 1, due, at(0))).toEqual(at(60));
    expect(nextAttemptAt(policy, 2, due, at(60))).toEqual(at(360));
    expect(nextAttemptAt(policy, 3, due, at(360))).toEqual(at(3960));
    expect(nextAttemptAt(policy, 7, due, at(7200))).toEqual(at(10800));
  });

  it('gives a last try at the expiry itself, then gives up', () => {
    expect(nextAttemptAt(policy, 9, due, at(14000))).toEqual(at(14400));
    expect(nextAttemptAt(policy, 10, due, at(14400))).toBeNull();
  });

  it("waits out a destination's back-off when it ends after the scheduled retry, still within the expiry", () => {
    expect(nextAttemptAt(policy, 1, due, at(0), at(45))).toEqual(at(60));
    expect(nextAttemptAt(policy, 1, due, at(0), at(300))).toEqual(at(300));
    expect(nextAttemptAt(policy, 9, due, at(14000), at(20000))).toEqual(at(14400));
  });
});
