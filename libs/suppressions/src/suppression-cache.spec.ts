import type { NatsService } from '@herald/bus';
import { MAX_CACHED_ENTRIES, SuppressionCache } from './suppression-cache';
import type { SuppressionsRepository } from './suppressions.repository';

/** A NATS connection that hands the test the subscription's callback. */
function fakeNats() {
  let deliver: ((error: Error | null, msg: { data: Uint8Array }) => void) | null = null;
  const nc = {
    subscribe: (_subject: string, options: { callback: typeof deliver }) => {
      deliver = options.callback;
      return { unsubscribe: () => undefined };
    },
    status: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => undefined) }) }),
    flush: () => Promise.resolve(),
  };
  const nats = { connect: () => Promise.resolve(nc), isReady: () => true } as unknown as NatsService;
  const publish = (type: string, teamId: string, email: string) =>
    deliver!(null, { data: Buffer.from(JSON.stringify({ type, team_id: teamId, data: { email } })) });
  return { nats, publish };
}

/** A list in "Postgres" that the test changes, and counts of the reads. */
function fakeRepository(list: string[]) {
  const calls = { teamList: 0, suppressedAmong: 0 };
  let gate: Promise<void> = Promise.resolve();
  let failing = false;
  const repository = {
    teamList: async (_teamId: string, limit: number) => {
      calls.teamList++;
      const snapshot = [...list];
      await gate;
      return snapshot.slice(0, limit);
    },
    suppressedAmong: async (_teamId: string, emails: string[]) => {
      calls.suppressedAmong++;
      if (failing) throw new Error('connection terminated');
      return emails.filter((e) => list.includes(e));
    },
  } as unknown as SuppressionsRepository;
  return {
    repository,
    calls,
    hold: () => {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return () => open();
    },
    fail: () => (failing = true),
  };
}

const config = { NATS_NAMESPACE: 't' };

async function liveCache(list: string[]) {
  const nats = fakeNats();
  const repo = fakeRepository(list);
  const cache = new SuppressionCache(config, nats.nats, repo.repository);
  await cache.isSuppressed('team', ['warm@example.com']);
  await new Promise((resolve) => setImmediate(resolve));
  expect(cache.isLive).toBe(true);
  return { cache, list, ...nats, ...repo };
}

describe('SuppressionCache', () => {
  it('reads the list once, then answers from it and from the events', async () => {
    const { cache, calls, publish, list } = await liveCache(['a@example.com']);
    expect(await cache.isSuppressed('team', ['A@Example.com', 'b@example.com'])).toEqual(new Set(['a@example.com']));
    expect(await cache.isSuppressed('team', ['b@example.com'])).toEqual(new Set());
    expect(calls.teamList).toBe(1);
    list.push('b@example.com');
    publish('suppression.added', 'team', 'B@example.com');
    expect(await cache.isSuppressed('team', ['b@example.com'])).toEqual(new Set(['b@example.com']));
    publish('suppression.removed', 'team', 'a@example.com');
    expect(await cache.isSuppressed('team', ['a@example.com'])).toEqual(new Set());
    expect(calls.teamList).toBe(1);
  });

  it('does not keep a list read before an event that arrived during the read; the next check reads again', async () => {
    const { cache, calls, publish, list, hold } = await liveCache([]);
    const open = hold();
    const first = cache.isSuppressed('team', ['late@example.com']);
    await new Promise((resolve) => setImmediate(resolve));
    list.push('late@example.com');
    publish('suppression.added', 'team', 'late@example.com');
    open();
    // The read began before the addition: this check answers from Postgres instead.
    expect(await first).toEqual(new Set(['late@example.com']));
    expect(await cache.isSuppressed('team', ['late@example.com'])).toEqual(new Set(['late@example.com']));
    expect(calls.teamList).toBe(2);
  });

  it(`asks Postgres for every check of a list over ${MAX_CACHED_ENTRIES} addresses`, async () => {
    const long = Array.from({ length: MAX_CACHED_ENTRIES + 1 }, (_, i) => `${i}@example.com`);
    const { cache, calls } = await liveCache(long);
    expect(await cache.isSuppressed('team', ['7@example.com'])).toEqual(new Set(['7@example.com']));
    expect(await cache.isSuppressed('team', ['x@example.com'])).toEqual(new Set());
    expect(calls.suppressedAmong).toBeGreaterThanOrEqual(2);
  });

  it('fails the check when it must ask Postgres and Postgres fails: never "not suppressed"', async () => {
    const nats = fakeNats();
    const repo = fakeRepository(['a@example.com']);
    repo.fail();
    const cache = new SuppressionCache(config, nats.nats, repo.repository);
    await expect(cache.isSuppressed('team', ['a@example.com'])).rejects.toThrow('connection terminated');
  });
});
