import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IsolatedConfig, isolatedConfig, TcpProxy } from '@herald/testing';
import { bootIdempotency, createTeam } from '../../../test/support/idempotency-world';
import { IdempotencyRecords } from './idempotency-records.repository';
import { IdempotencyService } from './idempotency.service';
import { Begin, IdempotencyScope, Lease } from './idempotency.types';

/** Each way between this eu-west-1 process and the registry's Redis in us-east-1. */
const DISTANCE_MS = 400;

function leaseOf(begun: Begin): Lease {
  if (begun.kind !== 'proceed') throw new Error(`expected proceed, got ${begun.kind}`);
  return begun.lease;
}

/**
 * The registry from a region other than Redis's (REDIS_REGION), 400 ms away each way: a keyed
 * request waits for its claim (one round trip) but not for its completion, and a retry that comes
 * before Redis has the completion is replayed from the record in Postgres, not run again.
 */
describe('IdempotencyService with Redis in another region', () => {
  let env: IsolatedConfig;
  let proxy: TcpProxy;
  let app: INestApplicationContext;
  /** A process beside Redis, in us-east-1: its retries reach Redis before the far process's completion does. */
  let near: INestApplicationContext;
  let service: IdempotencyService;
  let records: IdempotencyRecords;
  let db: DataSource;
  let teamId: string;
  const scope = (key: string): IdempotencyScope => ({ teamId, endpoint: 'POST /emails', key });

  beforeAll(async () => {
    env = await isolatedConfig();
    const redis = new URL(env.config.REDIS_URL);
    proxy = (await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) })).latency(DISTANCE_MS);
    app = await bootIdempotency({
      ...env.config,
      HERALD_REGION: 'eu-west-1',
      REDIS_REGION: 'us-east-1',
      REDIS_URL: proxy.rewrite(env.config.REDIS_URL),
      REDIS_COMMAND_TIMEOUT_MS: 5_000,
    });
    near = await bootIdempotency(env.config);
    [service, records, db] = [app.get(IdempotencyService), app.get(IdempotencyRecords), app.get(DataSource)];
    teamId = await createTeam(db);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await near?.close();
    await proxy?.close();
    await env?.cleanup();
  });

  it('answers without waiting for the completion, and replays a retry that comes before Redis has it', async () => {
    const lease = leaseOf(await service.begin(scope('far'), 'h1'));
    await db.transaction((m) => records.insert(m, { ...lease.scope, requestHash: 'h1', statusCode: 200, response: { id: 'email-1' } }));
    const started = performance.now();
    await service.finish(lease, 200, { id: 'email-1' });
    expect(performance.now() - started).toBeLessThan(DISTANCE_MS);
    // A retry at once (in us-east-1, beside Redis) meets the marker, the completion still on its way: Postgres answers it.
    const retry = near.get(IdempotencyService);
    await expect(retry.begin(scope('far'), 'h1')).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'email-1' } });
    // Once Redis has the completion, the replay comes from Redis alone.
    await new Promise((resolve) => setTimeout(resolve, 2 * DISTANCE_MS));
    await db.query(`DELETE FROM idempotency_records WHERE team_id = $1`, [teamId]);
    await expect(retry.begin(scope('far'), 'h1')).resolves.toEqual({ kind: 'replay', statusCode: 200, body: { id: 'email-1' } });
  }, 30_000);
});
