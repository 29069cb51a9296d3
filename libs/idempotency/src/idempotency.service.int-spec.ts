import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HeraldError } from '@herald/core';
import { RedisService } from '@herald/redis';
import { IsolatedConfig, isolatedConfig, purgeRedisPrefix } from '@herald/testing';
import { ageRecords, bootIdempotency, createTeam, registryKeys } from '../../../test/support/idempotency-world';
import { IdempotencyRecords, isIdempotencyConflict } from './idempotency-records.repository';
import { IdempotencyService } from './idempotency.service';
import { Begin, IdempotencyScope, Lease, Replay } from './idempotency.types';
import { decodeEntry, encodeInFlight } from './registry-entry.codec';

const ENDPOINT = 'POST /emails';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof HeraldError)) throw new Error(`expected a HeraldError, got ${String(error)}`);
  return error.code;
}

function leaseOf(begun: Begin): Lease {
  if (begun.kind !== 'proceed') throw new Error(`expected proceed, got ${begun.kind}`);
  return begun.lease;
}

describe('IdempotencyService', () => {
  let env: IsolatedConfig;
  let app: INestApplicationContext;
  let other: INestApplicationContext;
  let db: DataSource;
  let service: IdempotencyService;
  let records: IdempotencyRecords;
  let teamId: string;
  let n = 0;

  beforeAll(async () => {
    env = await isolatedConfig();
    app = await bootIdempotency(env.config);
    other = await bootIdempotency(env.config);
    db = app.get(DataSource);
    service = app.get(IdempotencyService);
    records = app.get(IdempotencyRecords);
  });
  afterAll(async () => {
    await app?.close();
    await other?.close();
    await env?.cleanup();
  });
  beforeEach(async () => {
    teamId = await createTeam(db);
  });

  const scope = (key = `key-${++n}`): IdempotencyScope => ({ teamId, endpoint: ENDPOINT, key });

  /** What the send path does after validation and quota: one transaction, then complete. */
  async function commitSend(lease: Lease, body: unknown): Promise<void> {
    await db.transaction((m) => records.insert(m, { ...lease.scope, requestHash: lease.requestHash, statusCode: 200, response: body }));
    expect(await service.complete(lease, 200, body)).toBe(true);
  }

  it('proceeds, then replays the completed response for the same payload', async () => {
    const s = scope();
    const lease = leaseOf(await service.begin(s, 'h1'));
    await commitSend(lease, { id: 'email-1' });
    await expect(service.begin(s, 'h1')).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'email-1' } });
  });

  it('keeps the marker briefly and the final record for the retention window', async () => {
    const lease = leaseOf(await service.begin(scope(), 'h1'));
    const [key] = await registryKeys(app, teamId);
    const redis = app.get(RedisService).client;
    const inFlight = await redis.pTTL(key);
    expect(inFlight).toBeGreaterThan(0);
    expect(inFlight).toBeLessThanOrEqual(env.config.IDEMPOTENCY_IN_FLIGHT_SECONDS * 1000);
    await commitSend(lease, { id: 'e' });
    expect(await redis.pTTL(key)).toBeGreaterThan(env.config.IDEMPOTENCY_TTL_SECONDS * 1000 - 60_000);
  });

  it('rejects a different payload with 409 invalid_idempotent_request, in flight or done', async () => {
    const s = scope();
    const lease = leaseOf(await service.begin(s, 'h1'));
    expect(await codeOf(service.begin(s, 'h2'))).toBe('invalid_idempotent_request');
    await commitSend(lease, { id: 'e' });
    expect(await codeOf(service.begin(s, 'h2'))).toBe('invalid_idempotent_request');
  });

  it('answers 409 concurrent_idempotent_requests while the first request is in flight', async () => {
    const s = scope();
    leaseOf(await service.begin(s, 'h1'));
    expect(await codeOf(service.begin(s, 'h1'))).toBe('concurrent_idempotent_requests');
    expect(await codeOf(other.get(IdempotencyService).begin(s, 'h1'))).toBe('concurrent_idempotent_requests');
  });

  it('frees the key on abandon: errors are not cached, even for another payload', async () => {
    const s = scope();
    const lease = leaseOf(await service.begin(s, 'h-invalid'));
    expect(await service.abandon(lease)).toBe(true);
    const retry = leaseOf(await service.begin(s, 'h-fixed'));
    expect(await service.abandon(lease)).toBe(false);
    expect(await service.complete(lease, 200, { id: 'stale' })).toBe(false);
    await commitSend(retry, { id: 'fixed' });
    await expect(service.begin(s, 'h-fixed')).resolves.toMatchObject({ body: { id: 'fixed' } });
  });

  it('keeps keys apart per team and per endpoint', async () => {
    const s = scope('shared');
    leaseOf(await service.begin(s, 'h'));
    leaseOf(await service.begin({ ...s, endpoint: 'POST /emails/batch' }, 'h'));
    leaseOf(await service.begin({ ...s, teamId: await createTeam(db) }, 'h'));
    leaseOf(await service.begin({ ...s, key: 'shared:' }, 'h'));
  });

  it('lets exactly one of 50 concurrent begins across two processes proceed', async () => {
    const s = scope();
    const services = [service, other.get(IdempotencyService)];
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => services[i % 2].begin(s, 'h1')));
    const proceeded = outcomes.filter((o) => o.status === 'fulfilled' && o.value.kind === 'proceed');
    const rejected = outcomes.filter(
      (o) => o.status === 'rejected' && o.reason instanceof HeraldError && o.reason.code === 'concurrent_idempotent_requests',
    );
    expect(proceeded).toHaveLength(1);
    expect(rejected).toHaveLength(49);
  });

  /**
   * The send path's insert of its record for a lease that proceeded: a record another request
   * committed makes it conflict, and the answer is that request's (replayCommitted).
   */
  async function insertOrReplay(lease: Lease, body: unknown): Promise<Replay | 'stored'> {
    try {
      await db.transaction((m) => records.insert(m, { ...lease.scope, requestHash: lease.requestHash, statusCode: 200, response: body }));
      return 'stored';
    } catch (error) {
      if (!isIdempotencyConflict(error)) throw error;
      return service.replayCommitted(lease);
    }
  }

  it('proceeds after Redis lost the key without reading Postgres; the insert finds the record, replays it and writes it back to Redis', async () => {
    const s = scope();
    await commitSend(leaseOf(await service.begin(s, 'h1')), { id: 'durable' });
    await purgeRedisPrefix(env.config);

    const retry = leaseOf(await other.get(IdempotencyService).begin(s, 'h1'));
    await expect(insertOrReplay(retry, { id: 'duplicate' })).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'durable' } });
    expect(await registryKeys(app, teamId)).toHaveLength(1);
    await db.query(`DELETE FROM idempotency_records WHERE team_id = $1`, [teamId]);
    await expect(service.begin(s, 'h1')).resolves.toMatchObject({ kind: 'replay', body: { id: 'durable' } });
  });

  it('rejects a different payload at the insert after Redis lost the key', async () => {
    const s = scope();
    await commitSend(leaseOf(await service.begin(s, 'h1')), { id: 'durable' });
    await purgeRedisPrefix(env.config);
    const changed = leaseOf(await service.begin(s, 'h2'));
    expect(await codeOf(insertOrReplay(changed, { id: 'changed' }))).toBe('invalid_idempotent_request');
    await expect(service.begin(s, 'h1')).resolves.toMatchObject({ kind: 'replay' });
  });

  it('proceeds when the only record in Postgres has expired', async () => {
    const s = scope();
    await commitSend(leaseOf(await service.begin(s, 'h1')), { id: 'old' });
    await purgeRedisPrefix(env.config);
    await ageRecords(db, teamId, 25);
    const lease = leaseOf(await service.begin(s, 'h2'));
    await commitSend(lease, { id: 'new' });
    await expect(service.begin(s, 'h2')).resolves.toMatchObject({ body: { id: 'new' } });
  });

  it('frees the key when the in-flight marker expires (crashed request)', async () => {
    const s = scope();
    const crashed = leaseOf(await service.begin(s, 'h1'));
    const [key] = await registryKeys(app, teamId);
    await app.get(RedisService).client.pExpire(key, 1);
    await sleep(20);

    const retry = leaseOf(await service.begin(s, 'h1'));
    expect(await service.complete(crashed, 200, { id: 'crashed' })).toBe(false);
    expect(await service.abandon(crashed)).toBe(false);
    expect(await codeOf(service.begin(s, 'h1'))).toBe('concurrent_idempotent_requests');
    await commitSend(retry, { id: 'retry' });
    await expect(service.begin(s, 'h1')).resolves.toMatchObject({ body: { id: 'retry' } });
  });

  it('gives the marker a deadline counted from its request, which a later claim honours over the TTL', async () => {
    const s = scope();
    const before = Date.now();
    const dead = leaseOf(await service.begin(s, 'h1'));
    const [key] = await registryKeys(app, teamId);
    const redis = app.get(RedisService).client;
    const marker = decodeEntry((await redis.get(key))!);
    expect(marker).toMatchObject({ state: 'in_flight', token: dead.token });
    expect(dead.deadline).toBeGreaterThanOrEqual(before + env.config.IDEMPOTENCY_IN_FLIGHT_SECONDS * 1000);
    expect(marker.state === 'in_flight' && marker.deadline).toBe(dead.deadline);
    expect(await codeOf(service.begin(s, 'h1'))).toBe('concurrent_idempotent_requests');

    // A claim a partition delivered late: its request started (and gave up) long ago, so its
    // deadline has passed while Redis would keep it for another minute.
    const late = encodeInFlight('h1', dead.token, Date.now() - 1);
    await redis.set(key, late, { PX: 60_000 });
    const retry = leaseOf(await other.get(IdempotencyService).begin(s, 'h1'));
    expect(retry.token).not.toBe(dead.token);
    // The dead request cannot complete or free what is now the retry's.
    expect(await service.complete(dead, 200, { id: 'dead' })).toBe(false);
    expect(await service.abandon(dead)).toBe(false);
    await commitSend(retry, { id: 'retry' });
    await expect(service.begin(s, 'h1')).resolves.toMatchObject({ body: { id: 'retry' } });
  });

  it('answers a request that committed while its marker is still in Redis (it died before swapping) from Postgres', async () => {
    const s = scope();
    const dead = leaseOf(await service.begin(s, 'h1'));
    await db.transaction((m) => records.insert(m, { ...dead.scope, requestHash: 'h1', statusCode: 200, response: { id: 'committed' } }));
    // No complete(): the process died here, and its marker lives on in Redis.
    await expect(other.get(IdempotencyService).begin(s, 'h1')).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'committed' } });
    expect(await codeOf(service.begin(s, 'another payload'))).toBe('invalid_idempotent_request');
  });

  it('settles two requests that both proceeded after Redis lost the key: Postgres decides', async () => {
    const s = scope();
    const first = leaseOf(await service.begin(s, 'h1'));
    await purgeRedisPrefix(env.config);
    const second = leaseOf(await other.get(IdempotencyService).begin(s, 'h1'));

    await db.transaction((m) => records.insert(m, { ...s, requestHash: 'h1', statusCode: 200, response: { id: 'first' } }));
    expect(await service.complete(first, 200, { id: 'first' })).toBe(false);
    const lost = await db
      .transaction((m) => records.insert(m, { ...s, requestHash: 'h1', statusCode: 200, response: { id: 'second' } }))
      .catch((e: unknown) => e);
    expect(isIdempotencyConflict(lost)).toBe(true);

    await expect(other.get(IdempotencyService).replayCommitted(second)).resolves.toEqual({
      kind: 'replay',
      statusCode: 200,
      body: { id: 'first' },
    });
    await db.query(`DELETE FROM idempotency_records WHERE team_id = $1`, [teamId]);
    await expect(service.begin(s, 'h1')).resolves.toMatchObject({ body: { id: 'first' } });
  });

  it('answers 409 from replayCommitted when the committed request had another payload', async () => {
    const s = scope();
    const mine = leaseOf(await service.begin(s, 'mine'));
    await db.transaction((m) => records.insert(m, { ...s, requestHash: 'theirs', statusCode: 200, response: { id: 'theirs' } }));
    expect(await codeOf(service.replayCommitted(mine))).toBe('invalid_idempotent_request');
    expect(await codeOf(service.begin(s, 'mine'))).toBe('invalid_idempotent_request');
  });
});
