import { DestinationHealth } from './destination-health';

describe('DestinationHealth', () => {
  let now: number;
  const health = () =>
    new DestinationHealth('mx.example.test', { failuresBeforeBackoff: 3, backoffInitialMs: 1_000, backoffMaxMs: 5_000 }, () => now);
  beforeEach(() => (now = 1_000_000));

  it('suspends after the threshold of consecutive failures, naming the last one; a success in between starts the count again', () => {
    const h = health();
    h.failed('a');
    h.failed('b');
    h.succeeded();
    h.failed('c');
    h.failed('d');
    expect(h.suspension()).toBeNull();
    h.failed('421 4.3.2 busy');
    expect(h.suspension()).toEqual({
      reply: `451 4.4.1 Herald: mx.example.test in back-off until ${new Date(now + 1_000).toISOString()} after 3 consecutive failures; last: 421 4.3.2 busy`,
      until: new Date(now + 1_000),
    });
    expect(h.onProbation()).toBe(false);
  });

  it('does not stretch a back-off for the failures of connections opened before it (a tarpit times them out together)', () => {
    const h = health();
    for (let i = 0; i < 10; i++) h.failed('Greeting never received');
    expect(h.suspension()?.until).toEqual(new Date(now + 1_000));
  });

  it('puts the destination on probation when the back-off ends: a failed probe doubles it (up to the max), a success clears it', () => {
    const h = health();
    for (let i = 0; i < 3; i++) h.failed('refused');
    const expected = [2_000, 4_000, 5_000, 5_000];
    for (const backoff of expected) {
      now = h.suspension()!.until.getTime();
      expect(h.suspension()).toBeNull();
      expect(h.onProbation()).toBe(true);
      h.failed('refused');
      expect(h.suspension()?.until).toEqual(new Date(now + backoff));
    }
    now = h.suspension()!.until.getTime();
    h.succeeded();
    expect(h.onProbation()).toBe(false);
    for (let i = 0; i < 3; i++) h.failed('refused');
    expect(h.suspension()?.until).toEqual(new Date(now + 1_000));
  });

  it('is forgettable without failures, or once a longest back-off has passed since its suspension ended', () => {
    const h = health();
    expect(h.isForgettable()).toBe(true);
    for (let i = 0; i < 3; i++) h.failed('refused');
    expect(h.isForgettable()).toBe(false);
    now += 1_000 + 4_999;
    expect(h.isForgettable()).toBe(false);
    now += 1;
    expect(h.isForgettable()).toBe(true);
  });
});
