import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { isolatedConfig, type IsolatedConfig } from '@herald/testing';
import { NatsProbe } from '../support/nats-probe';
import { OutboxProcess, type OutboxKind } from '../support/outbox-process';
import { waitUntil } from '../support/worker-process';

/** What the test reads of an outbox's table, and of the stream its entries go to. */
interface OutboxCase {
  name: string;
  kind: OutboxKind;
  /** Time passes: the committed entries become due to the relay. */
  age(db: Client, ids: string[]): Promise<void>;
  /** Ids on the region's stream, one per stored message. */
  onStream(probe: NatsProbe, region: string): Promise<string[]>;
  /** How many of the outbox rows of these entries are not yet recorded as published. */
  unconfirmed(db: Client, ids: string[]): Promise<number>;
  /** How many of those rows no transaction holds locked. */
  unlocked(db: Client, ids: string[]): Promise<number>;
}

const count = async (db: Client, sql: string, ids: string[]) => Number((await db.query<{ n: string }>(sql, [ids])).rows[0].n);
const eventIds = async (probe: NatsProbe, region: string) => (await probe.events(region)).map((e) => e.id);

const dispatches: OutboxCase = {
  name: 'dispatch outbox (email_dispatches)',
  kind: 'dispatches',
  async age(db, ids) {
    await db.query(`UPDATE email_dispatches SET due_at = now() - interval '1 second' WHERE email_ids && $1::uuid[]`, [ids]);
  },
  onStream: (probe, region) => probe.sendCommands(region),
  unconfirmed: (db, ids) => count(db, `SELECT count(*) AS n FROM email_dispatches WHERE email_ids && $1::uuid[]`, ids),
  unlocked: (db, ids) =>
    count(db, `SELECT count(*) AS n FROM (SELECT 1 FROM email_dispatches WHERE email_ids && $1::uuid[] FOR UPDATE SKIP LOCKED) r`, ids),
};

const eventOutbox = (name: string, kind: OutboxKind, table: string): OutboxCase => ({
  name,
  kind,
  async age(db, ids) {
    await db.query(`UPDATE ${table} SET created_at = created_at - interval '11 seconds' WHERE id = ANY($1::uuid[])`, [ids]);
  },
  onStream: eventIds,
  unconfirmed: (db, ids) => count(db, `SELECT count(*) AS n FROM ${table} WHERE id = ANY($1::uuid[]) AND published_at IS NULL`, ids),
  unlocked: (db, ids) =>
    count(db, `SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE id = ANY($1::uuid[]) AND published_at IS NULL FOR UPDATE SKIP LOCKED) r`, ids),
});

/** How many times each id is on the stream. */
const copies = (stream: string[], ids: string[]) => Object.fromEntries(ids.map((id) => [id, stream.filter((s) => s === id).length]));
const once = (ids: string[]) => Object.fromEntries(ids.map((id) => [id, 1]));

/**
 * The one outbox mechanism, in each of its three tables, with its processes killed (SIGKILL) at
 * the two points where a crash could lose or double an entry: a producer killed between the
 * commit of its entries and their publish, then the relay that took them over killed after the
 * stream acknowledged them and before it recorded so. After the restart, two relays running side
 * by side (two replicas of the role) publish each entry exactly once between them, the stream
 * holds each once (JetStream drops the dead relay's copy by its Nats-Msg-Id), and every row is
 * recorded as published.
 */
describe.each([
  dispatches,
  eventOutbox('email events (email_events)', 'email-events', 'email_events'),
  eventOutbox('resource events (resource_events)', 'resource-events', 'resource_events'),
])('outbox relay killed between commit and publish: $name', (outbox) => {
  let isolated: IsolatedConfig;
  let probe: NatsProbe;
  let db: Client;
  const processes: OutboxProcess[] = [];
  const start = async (fault: 'none' | 'before-publish' | 'after-publish') => {
    const started = await OutboxProcess.start(isolated.config, outbox.kind, fault);
    processes.push(started);
    return started;
  };

  beforeAll(async () => {
    // Only the test's own relay passes: the periodic ones would race it.
    isolated = await isolatedConfig({ RECONCILE_INTERVAL_MS: '600000' });
    probe = await NatsProbe.open(isolated.config);
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${isolated.config.DATABASE_SCHEMA}"`);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await db?.end();
    await probe?.close();
    await isolated?.cleanup();
  });

  it('publishes each committed entry exactly once after the restart, and records it', async () => {
    const region = isolated.config.HERALD_REGION;
    const teamId = randomUUID();
    await db.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', $2, 'free')`, [teamId, region]);
    const onStream = async (ids: string[]) => (await outbox.onStream(probe, region)).filter((id) => ids.includes(id));

    const producer = await start('before-publish');
    const ids = await producer.commit(teamId);
    expect(ids).toHaveLength(12);
    await producer.halted();
    expect(await producer.kill()).toBe('SIGKILL');
    expect(await onStream(ids)).toEqual([]);
    const rows = await outbox.unconfirmed(db, ids);
    expect(rows).toBeGreaterThan(0);

    await outbox.age(db, ids);
    const relay = await start('after-publish');
    void relay.relay().catch(() => undefined); // it never answers: it is killed mid-pass
    expect([...(await relay.halted(ids.length))].sort()).toEqual([...ids].sort());
    expect(copies(await onStream(ids), ids)).toEqual(once(ids));
    expect(await outbox.unconfirmed(db, ids)).toBe(rows);
    expect(await relay.kill()).toBe('SIGKILL');
    // Postgres rolls the dead relay's transaction back once it sees the connection gone.
    await waitUntil('the killed relay to release its rows', async () => (await outbox.unlocked(db, ids)) === rows, 10_000);

    const [first, second] = await Promise.all([start('none'), start('none')]);
    const relayed = await Promise.all([first.relay(), second.relay()]);
    console.log(`${outbox.name}: the two relays published ${relayed.map((r) => r.relayed).join(' + ')} of ${ids.length}`);

    expect(relayed[0].relayed + relayed[1].relayed).toBe(ids.length);
    expect(copies([...relayed[0].published, ...relayed[1].published], ids)).toEqual(once(ids));
    expect(copies(await onStream(ids), ids)).toEqual(once(ids));
    expect(await outbox.unconfirmed(db, ids)).toBe(0);
    expect((await Promise.all([first.relay(), second.relay()])).map((r) => r.relayed)).toEqual([0, 0]);
    expect(await Promise.all([first.close(), second.close()])).toEqual([0, 0]);
  });
});
