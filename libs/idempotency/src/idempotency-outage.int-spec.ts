import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { HeraldError } from '@herald/core';
import { RedisService } from '@herald/redis';
import { eventually, IsolatedConfig, isolatedConfig, PrivateRedis, startPrivateRedis } from '@herald/testing';
import { bootIdempotency, createTeam } from '../../../test/support/idempotency-world';
import { IdempotencyRecords } from './idempotency-records.repository';
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
    // Redis lost every entry; Postgres still answers for the committed keys.
    await expect(service.begin(scope('committed'), 'h1')).resolves.toMatchObject({ kind: 'replay', body: { id: 'email-1' } });
    await expect(service.begin(scope('in flight'), 'h1')).resolves.toMatchObject({ kind: 'replay', body: { id: 'email-2' } });
    expect((await service.begin(scope('never seen'), 'h1')).kind).toBe('proceed');
  });
});
