import { createHash } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { createClient, RedisClientType } from 'redis';
import { DataSource } from 'typeorm';
import { HeraldError } from '@herald/core';
import { RedisService } from '@herald/redis';
import { eventually, IsolatedConfig, isolatedConfig, PrivateRedis, startPrivateRedis } from '@herald/testing';
import { bootIdempotency, createTeam } from '../../../test/support/idempotency-world';
import { IdempotencyRecords, isIdempotencyConflict } from './idempotency-records.repository';
import { IdempotencyService } from './idempotency.service';
import { Begin, IdempotencyScope, Lease } from './idempotency.types';

function leaseOf(begun: Begin): Lease {
  if (begun.kind !== 'proceed') throw new Error(`expected proceed, got ${begun.kind}`);
  return begun.lease;
}

async function refusal(promise: Promise<unknown>): Promise<HeraldError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof HeraldError)) throw new Error(`expected a HeraldError, got ${String(error)}`);
  return error;
}

/**
 * The registry while its Redis (a redis-server of this suite's own) is down, and after it comes
 * back empty. Without Redis there is no lock: only what Postgres holds as committed may be
 * answered; anything else is refused retryably, so nothing can run twice.
 */
describe('IdempotencyService without Redis', () => {
  let server: PrivateRedis;
  let env: IsolatedConfig;
  let app: INestApplicationContext;
  let service: IdempotencyService;
  let records: IdempotencyRecords;
  let db: DataSource;
  let teamId: string;
  const scope = (key: string): IdempotencyScope => ({ teamId, endpoint: 'POST /emails', key });

  beforeAll(async () => {
    server = await startPrivateRedis();
    env = await isolatedConfig({ REDIS_URL: server.url });
    app = await bootIdempotency(env.config);
    [service, records, db] = [app.get(IdempotencyService), app.get(IdempotencyRecords), app.get(DataSource)];
    teamId = await createTeam(db);
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
    await server?.stop();
  });

  it('replays committed keys from Postgres, refuses every other key with 503, and after Redis returns empty runs nothing twice', async () => {
    const committed = leaseOf(await service.begin(scope('committed'), 'h1'));
    await db.transaction((m) => records.insert(m, { ...committed.scope, requestHash: 'h1', statusCode: 200, response: { id: 'email-1' } }));
    expect(await service.complete(committed, 200, { id: 'email-1' })).toBe(true);
    const inFlight = leaseOf(await service.begin(scope('in flight'), 'h1'));

    await server.kill();
    await expect(app.get(RedisService).ping()).rejects.toMatchObject({ code: 'service_unavailable' });

    await expect(service.begin(scope('committed'), 'h1')).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'email-1' } });
    expect((await refusal(service.begin(scope('committed'), 'h2'))).code).toBe('invalid_idempotent_request');
    for (const key of ['in flight', 'never seen']) {
      const error = await refusal(service.begin(scope(key), 'h1'));
      expect({ code: error.code, retryAfterSeconds: error.retryAfterSeconds }).toEqual({ code: 'service_unavailable', retryAfterSeconds: 1 });
      expect(error.message).toMatch(/^Idempotency keys cannot be checked right now, and this request was not processed/);
    }
    // The in-flight request finishes without Redis: its commit stands, and the lost marker is no error.
    await db.transaction((m) => records.insert(m, { ...inFlight.scope, requestHash: 'h1', statusCode: 200, response: { id: 'email-2' } }));
    expect(await service.complete(inFlight, 200, { id: 'email-2' })).toBe(false);
    await expect(service.begin(scope('in flight'), 'h1')).resolves.toMatchObject({ kind: 'replay', body: { id: 'email-2' } });

    await server.restart();
    await eventually(async () => expect(await app.get(RedisService).ping()).toBe(true), 5000);
    // Redis lost every entry: each key proceeds, and Postgres answers for the committed ones at the insert.
    for (const [key, id] of [
      ['committed', 'email-1'],
      ['in flight', 'email-2'],
    ]) {
      const retry = leaseOf(await service.begin(scope(key), 'h1'));
      const duplicate = await db
        .transaction((m) => records.insert(m, { ...retry.scope, requestHash: 'h1', statusCode: 200, response: { id: 'duplicate' } }))
        .catch((e: unknown) => e);
      expect(isIdempotencyConflict(duplicate)).toBe(true);
      await expect(service.replayCommitted(retry)).resolves.toMatchObject({ kind: 'replay', body: { id } });
    }
    expect((await service.begin(scope('never seen'), 'h1')).kind).toBe('proceed');
  });
});

/**
 * A claim that goes unanswered (Redis froze) is refused 503, but lands when Redis thaws: the key
 * then holds a marker for a request that will never run. Two processes share this suite's own
 * Redis; keyspace notifications show what reaches it. The in-flight deadline is a minute, so
 * only the release, not the deadline, can free a key within the test.
 */
describe('IdempotencyService after a claim that went unanswered but landed', () => {
  let server: PrivateRedis;
  let env: IsolatedConfig;
  let here: INestApplicationContext;
  let elsewhere: INestApplicationContext;
  let watcher: RedisClientType;
  let teamId: string;
  const events: string[] = [];
  const scope = (key: string): IdempotencyScope => ({ teamId, endpoint: 'POST /emails', key });
  const digest = (key: string) => createHash('sha256').update(key).digest('base64url');
  const eventsOf = (key: string) => events.filter((e) => e.startsWith(`${digest(key)} `)).map((e) => e.split(' ')[1]);

  beforeAll(async () => {
    server = await startPrivateRedis();
    env = await isolatedConfig({ REDIS_URL: server.url, IDEMPOTENCY_IN_FLIGHT_SECONDS: '60' });
    here = await bootIdempotency(env.config);
    elsewhere = await bootIdempotency(env.config);
    teamId = await createTeam(here.get(DataSource));
    watcher = createClient({ url: server.url });
    await watcher.connect();
    await watcher.configSet('notify-keyspace-events', 'Kg$');
    await watcher.pSubscribe('__keyspace@0__:*idempotency*', (event, channel) => events.push(`${channel.split(':').pop()} ${event}`));
  });

  afterAll(async () => {
    await watcher?.quit();
    await here?.close();
    await elsewhere?.close();
    await env?.cleanup();
    await server?.stop();
  });

  it('takes over its own refused claim at once, and releases it, and a marker it could not release, for every other process once Redis answers', async () => {
    const service = here.get(IdempotencyService);
    const failing = leaseOf(await service.begin(scope('failed mid-request'), 'h1'));
    server.pause();
    // Sent together, so both claims are on the wire before the first timeout marks Redis unavailable.
    const refused = await Promise.all(['retried here', 'retried elsewhere'].map((key) => refusal(service.begin(scope(key), 'h1'))));
    expect(refused.map((e) => e.code)).toEqual(['service_unavailable', 'service_unavailable']);
    // A request that held its key fails on Redis too (its quota check, say): its release is refused unsent.
    expect(await service.abandon(failing)).toBe(false);
    server.resume();
    await eventually(async () => expect(await here.get(RedisService).ping()).toBe(true), 5000);
    // The refused claims ran when Redis thawed: each key holds a marker nobody will complete.
    await eventually(async () => expect([eventsOf('retried here')[0], eventsOf('retried elsewhere')[0]]).toEqual(['set', 'set']), 5000);

    // The process that was refused proceeds at once, rather than answering 409 for a minute...
    const lease = leaseOf(await service.begin(scope('retried here'), 'h1'));
    // ...and another process finds the key free within a release interval.
    const other = elsewhere.get(IdempotencyService);
    await eventually(async () => expect((await other.begin(scope('retried elsewhere'), 'h1')).kind).toBe('proceed'), 5000);
    // Keyspace notifications reach the watcher on their own connection, after the commands' replies.
    await eventually(async () => expect(eventsOf('retried elsewhere')).toEqual(expect.arrayContaining(['set', 'del'])), 5000);
    await eventually(async () => expect((await other.begin(scope('failed mid-request'), 'h1')).kind).toBe('proceed'), 5000);

    // A release never frees a key a live request holds: 'retried here' stays with its new lease.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await refusal(other.begin(scope('retried here'), 'h1'))).code).toBe('concurrent_idempotent_requests');
    expect(await service.complete(lease, 200, { id: 'email-3' })).toBe(true);
    await expect(other.begin(scope('retried here'), 'h1')).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'email-3' } });
  });
});
