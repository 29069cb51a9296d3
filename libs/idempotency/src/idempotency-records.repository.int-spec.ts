import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { ageRecords, bootIdempotency, createTeam } from '../../../test/support/idempotency-world';
import { IdempotencyConflictError, IdempotencyRecords, isIdempotencyConflict } from './idempotency-records.repository';

const ENDPOINT = 'POST /emails';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('IdempotencyRecords', () => {
  let env: IsolatedConfig;
  let app: INestApplicationContext;
  let db: DataSource;
  let records: IdempotencyRecords;
  let teamId: string;

  beforeAll(async () => {
    env = await isolatedConfig();
    app = await bootIdempotency(env.config);
    db = app.get(DataSource);
    records = app.get(IdempotencyRecords);
  });
  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });
  beforeEach(async () => {
    teamId = await createTeam(db);
  });

  const record = (key: string, requestHash = 'h1', response: unknown = { id: 'e1' }) => ({
    teamId,
    endpoint: ENDPOINT,
    key,
    requestHash,
    statusCode: 200,
    response,
  });
  /** A stand-in for the emails the send path writes in the same transaction. */
  const sideEffect = (manager: { query: DataSource['query'] }, name: string) =>
    manager.query(`INSERT INTO teams (id, name, home_region, plan) VALUES (gen_random_uuid(), $1, 'us-east-1', 'free')`, [name]);
  const sideEffects = async (name: string) => (await db.query(`SELECT count(*)::int AS n FROM teams WHERE name = $1`, [name]))[0].n as number;

  it('stores a record inside the caller’s transaction and finds it', async () => {
    await db.transaction((m) => records.insert(m, record('k1', 'h1', { data: [{ id: 'a' }, { id: 'b' }] })));
    const found = await records.find(teamId, ENDPOINT, 'k1');
    expect(found).toMatchObject({ teamId, endpoint: ENDPOINT, key: 'k1', requestHash: 'h1', statusCode: 200 });
    expect(found?.response).toEqual({ data: [{ id: 'a' }, { id: 'b' }] });
    expect(found?.createdAt).toBeInstanceOf(Date);
    expect(await records.find(teamId, 'POST /emails/batch', 'k1')).toBeNull();
  });

  it('stores top-level arrays and null as JSON', async () => {
    await db.transaction((m) => records.insert(m, record('arr', 'h', [1, 2])));
    await db.transaction((m) => records.insert(m, record('nil', 'h', null)));
    expect((await records.find(teamId, ENDPOINT, 'arr'))?.response).toEqual([1, 2]);
    expect((await records.find(teamId, ENDPOINT, 'nil'))?.response).toBeNull();
  });

  it('refuses to run outside a transaction', async () => {
    await expect(records.insert(db.manager, record('k-no-tx'))).rejects.toThrow(/inside the transaction/);
  });

  it('rolls back with the transaction it joined', async () => {
    await expect(
      db.transaction(async (m) => {
        await records.insert(m, record('k-rollback'));
        await sideEffect(m, 'rolled-back');
        throw new Error('send failed');
      }),
    ).rejects.toThrow('send failed');
    expect(await records.find(teamId, ENDPOINT, 'k-rollback')).toBeNull();
    expect(await sideEffects('rolled-back')).toBe(0);
  });

  it('reports a committed key as a conflict and rolls back the loser’s writes', async () => {
    await db.transaction((m) => records.insert(m, record('k-dup', 'h1', { id: 'first' })));
    const loser = db.transaction(async (m) => {
      await records.insert(m, record('k-dup', 'h2', { id: 'second' }));
      await sideEffect(m, 'loser');
    });
    await expect(loser).rejects.toBeInstanceOf(IdempotencyConflictError);
    await loser.catch((e: unknown) => expect(isIdempotencyConflict(e)).toBe(true));
    expect(await sideEffects('loser')).toBe(0);
    expect((await records.find(teamId, ENDPOINT, 'k-dup'))?.response).toEqual({ id: 'first' });
  });

  it('serialises two concurrent transactions on one key: one commits, the other conflicts', async () => {
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = db.transaction(async (m) => {
      await records.insert(m, record('k-race', 'h1', { id: 'first' }));
      await firstMayCommit;
    });
    await sleep(100);
    const second = db.transaction((m) => records.insert(m, record('k-race', 'h1', { id: 'second' })));
    await sleep(200);
    releaseFirst();
    const [a, b] = await Promise.allSettled([first, second]);
    expect(a.status).toBe('fulfilled');
    expect(b.status === 'rejected' && isIdempotencyConflict(b.reason)).toBe(true);
    expect((await records.find(teamId, ENDPOINT, 'k-race'))?.response).toEqual({ id: 'first' });
  });

  it('lets the second insert win when the first transaction rolls back', async () => {
    let abortFirst!: () => void;
    const firstAborts = new Promise<void>((resolve) => (abortFirst = resolve));
    const first = db.transaction(async (m) => {
      await records.insert(m, record('k-abort', 'h1', { id: 'first' }));
      await firstAborts;
      throw new Error('first failed');
    });
    await sleep(100);
    const second = db.transaction((m) => records.insert(m, record('k-abort', 'h1', { id: 'second' })));
    await sleep(200);
    abortFirst();
    await expect(first).rejects.toThrow('first failed');
    await expect(second).resolves.toBeUndefined();
    expect((await records.find(teamId, ENDPOINT, 'k-abort'))?.response).toEqual({ id: 'second' });
  });

  it('recognises a raw unique violation on its primary key, and only that one', async () => {
    await db.transaction((m) => records.insert(m, record('k-raw')));
    const insertRaw = db.query(
      `INSERT INTO idempotency_records (team_id, endpoint, key, request_hash, status_code, response)
       VALUES ($1, $2, 'k-raw', 'h', 200, '{}')`,
      [teamId, ENDPOINT],
    );
    const raw = await insertRaw.catch((e: unknown) => e);
    expect(isIdempotencyConflict(raw)).toBe(true);
    expect(isIdempotencyConflict((raw as { driverError: unknown }).driverError)).toBe(true);

    const otherUnique = await db
      .query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'dup', 'us-east-1', 'free')`, [teamId])
      .catch((e: unknown) => e);
    expect((otherUnique as { code?: string }).code).toBe('23505');
    expect(isIdempotencyConflict(otherUnique)).toBe(false);
    expect(isIdempotencyConflict(new Error('boom'))).toBe(false);
    expect(isIdempotencyConflict(null)).toBe(false);
  });

  it('ignores records older than the TTL and lets the key be reused', async () => {
    await db.transaction((m) => records.insert(m, record('k-old', 'h-old', { id: 'old' })));
    await ageRecords(db, teamId, 25);
    expect(await records.find(teamId, ENDPOINT, 'k-old')).toBeNull();

    await db.transaction((m) => records.insert(m, record('k-old', 'h-new', { id: 'new' })));
    const found = await records.find(teamId, ENDPOINT, 'k-old');
    expect(found).toMatchObject({ requestHash: 'h-new', response: { id: 'new' } });
    expect(Date.now() - (found?.createdAt.getTime() ?? 0)).toBeLessThan(60_000);
  });

  it('still conflicts just inside the window', async () => {
    await db.transaction((m) => records.insert(m, record('k-23h')));
    await ageRecords(db, teamId, 23);
    expect(await records.find(teamId, ENDPOINT, 'k-23h')).not.toBeNull();
    await expect(db.transaction((m) => records.insert(m, record('k-23h', 'h2')))).rejects.toBeInstanceOf(IdempotencyConflictError);
  });

  it('purges records older than the cutoff, in batches, and keeps the rest', async () => {
    for (const key of ['p1', 'p2', 'p3', 'p4', 'p5']) await db.transaction((m) => records.insert(m, record(key)));
    await ageRecords(db, teamId, 30);
    await db.transaction((m) => records.insert(m, record('p-fresh')));
    const cutoff = new Date(Date.now() - 24 * 3600 * 1000);

    const before = (await db.query(`SELECT count(*)::int AS n FROM idempotency_records WHERE created_at < $1`, [cutoff]))[0].n;
    expect(await records.purgeExpired(cutoff, 2)).toBe(before);
    expect(await records.purgeExpired(cutoff, 2)).toBe(0);
    const left: { key: string }[] = await db.query(`SELECT key FROM idempotency_records WHERE team_id = $1`, [teamId]);
    expect(left.map((r) => r.key)).toEqual(['p-fresh']);
  });
});
