import { AnswerDeadlines } from './answer-deadlines';

describe('AnswerDeadlines', () => {
  it('answers true for work that settles in time, resolved or rejected, and false for work that does not', async () => {
    const deadlines = new AnswerDeadlines(40);
    const never = new Promise<void>(() => undefined);
    const late = new Promise<void>((resolve) => setTimeout(resolve, 200));
    const results = await Promise.all([
      deadlines.settlesWithin(Promise.resolve()),
      deadlines.settlesWithin(Promise.reject(new Error('no stream'))),
      deadlines.settlesWithin(never),
      deadlines.settlesWithin(late),
      deadlines.settlesWithin(new Promise((resolve) => setTimeout(resolve, 5))),
    ]);
    expect(results).toEqual([true, true, false, false, true]);
  });

  it('waits no longer than its timeout, give or take a sweep', async () => {
    const deadlines = new AnswerDeadlines(40);
    const started = performance.now();
    await deadlines.settlesWithin(new Promise<void>(() => undefined));
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
