import { randomUUID } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import type { ModuleMetadata } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BusModule, type HeraldEvent } from '@herald/bus';
import { ConfigModule } from '@herald/config';
import { isoTimestamp, newId } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import { DispatchReconciler, DispatchReconcilerModule, emailEvent, EmailEventOutbox, EmailStore, MessagesModule } from '@herald/messages';
import { MetricsModule } from '@herald/observability';
import { ResourceEventOutbox, ResourceEventsModule } from '@herald/outbox';
import { isolatedConfig, type IsolatedConfig } from '@herald/testing';
import { newEmailRow, normalizedEmail } from '../support/email-rows';
import { NatsProbe } from '../support/nats-probe';

/** One process of a role: the outboxes on the isolated schema and NATS namespace. */
async function startProcess(isolated: IsolatedConfig, imports: NonNullable<ModuleMetadata['imports']>): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(isolated.config), DatabaseModule, BusModule, MetricsModule.forRole('test'), ...imports],
  }).compile();
  return moduleRef.init();
}

/** What differs between the three outboxes. */
interface OutboxCase {
  name: string;
  imports: NonNullable<ModuleMetadata['imports']>;
  /**
   * Commits `n` entries through the producer's own write path and stops there, as a process
   * killed between the commit and the publish does; answers the Nats-Msg-Ids to expect.
   */
  commit(process: TestingModule, region: string, teamId: string): Promise<string[]>;
  /** Time passes: the committed entries become due to the relay. */
  age(db: DataSource, ids: string[]): Promise<void>;
  relayOnce(process: TestingModule): Promise<number>;
  /** Ids on the region's stream, one per stored message. */
  onStream(probe: NatsProbe, region: string): Promise<string[]>;
  /** How many of the rows are still not confirmed. */
  unconfirmed(db: DataSource, ids: string[]): Promise<number>;
}

const count = async (db: DataSource, sql: string, ids: string[]) => Number(((await db.query(sql, [ids])) as { n: string }[])[0].n);
const eventIds = async (probe: NatsProbe, region: string) => (await probe.events(region)).map((e) => e.id);

const dispatches: OutboxCase = {
  name: 'dispatch outbox (email_dispatches)',
  imports: [MessagesModule, DispatchReconcilerModule],
  async commit(process, region, teamId) {
    // Four requests of three emails each: each request's emails share one outbox row.
    const rows = Array.from({ length: 4 }, () => {
      const dispatchId = newId();
      return Array.from({ length: 3 }, () => ({ ...newEmailRow(teamId, normalizedEmail('a@outbox.example', 'outbox.example'), dispatchId), region }));
    }).flat();
    await process.get(EmailStore).insert(rows);
    return rows.map((r) => r.id);
  },
  async age(db, ids) {
    await db.query(`UPDATE email_dispatches SET due_at = now() - interval '1 second' WHERE email_ids && $1::uuid[]`, [ids]);
  },
  relayOnce: (process) => process.get(DispatchReconciler).runOnce(),
  onStream: (probe, region) => probe.sendCommands(region),
  unconfirmed: (db, ids) => count(db, `SELECT count(*) AS n FROM email_dispatches WHERE email_ids && $1::uuid[]`, ids),
};

const emailEvents: OutboxCase = {
  name: 'email events (email_events)',
  imports: [MessagesModule],
  async commit(process, region, teamId) {
    const store = process.get(EmailStore);
    const rows = Array.from({ length: 12 }, () => ({ ...newEmailRow(teamId, normalizedEmail('a@outbox.example', 'outbox.example')), region }));
    await store.insert(rows);
    const events = [];
    for (const row of rows) {
      const email = (await store.emailForReport(row.id))!;
      events.push(emailEvent('email.complained', email, email.recipients, new Date(), 'complaint'));
    }
    // The late-report path: recorded with the recipients' state, then (not) published.
    const fresh = await store.recordLate(events, []);
    return fresh.map((e) => e.id);
  },
  async age(db, ids) {
    await db.query(`UPDATE email_events SET created_at = created_at - interval '11 seconds' WHERE id = ANY($1::uuid[])`, [ids]);
  },
  relayOnce: (process) => process.get(EmailEventOutbox).relayOnce(),
  onStream: eventIds,
  unconfirmed: (db, ids) => count(db, `SELECT count(*) AS n FROM email_events WHERE id = ANY($1::uuid[]) AND published_at IS NULL`, ids),
};

const resourceEvents: OutboxCase = {
  name: 'resource events (resource_events)',
  imports: [ResourceEventsModule],
  async commit(process, region, teamId) {
    const events: HeraldEvent[] = Array.from({ length: 12 }, () => ({
      id: newId(),
      type: 'suppression.added',
      created_at: isoTimestamp(new Date()),
      team_id: teamId,
      data: { id: randomUUID(), email: 'lost@example.com' },
    }));
    await process.get(DataSource).transaction((m) => process.get(ResourceEventOutbox).record(m, region, events));
    return events.map((e) => e.id);
  },
  async age(db, ids) {
    await db.query(`UPDATE resource_events SET created_at = created_at - interval '11 seconds' WHERE id = ANY($1::uuid[])`, [ids]);
  },
  relayOnce: (process) => process.get(ResourceEventOutbox).relayOnce(),
  onStream: eventIds,
  unconfirmed: (db, ids) => count(db, `SELECT count(*) AS n FROM resource_events WHERE id = ANY($1::uuid[]) AND published_at IS NULL`, ids),
};

/**
 * The one outbox mechanism, in each of its three tables: a process killed between the commit of
 * its entries and their publish leaves them behind; after the restart, two relays running side
 * by side (two replicas of the role) publish each entry exactly once between them, and confirm it.
 */
describe.each([dispatches, emailEvents, resourceEvents])('outbox relay after a crash between commit and publish: $name', (outbox) => {
  let isolated: IsolatedConfig;
  let probe: NatsProbe;
  const processes: TestingModule[] = [];

  beforeAll(async () => {
    // Only the test's own relay passes: the periodic ones would race it.
    isolated = await isolatedConfig({ RECONCILE_INTERVAL_MS: '600000' });
    probe = await NatsProbe.open(isolated.config);
  });

  afterAll(async () => {
    for (const p of processes) await p.close();
    await probe?.close();
    await isolated?.cleanup();
  });

  it('publishes each committed entry exactly once after the restart', async () => {
    const region = isolated.config.HERALD_REGION;
    const crashed = await startProcess(isolated, outbox.imports);
    const teamId = randomUUID();
    await crashed.get(DataSource).query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', $2, 'free')`, [teamId, region]);
    const ids = await outbox.commit(crashed, region, teamId);
    expect(ids).toHaveLength(12);
    await crashed.close(); // killed before publishing: nothing of it reached the stream
    expect((await outbox.onStream(probe, region)).filter((id) => ids.includes(id))).toEqual([]);

    const [first, second] = await Promise.all([startProcess(isolated, outbox.imports), startProcess(isolated, outbox.imports)]);
    processes.push(first, second);
    const db = first.get(DataSource);
    await outbox.age(db, ids);
    const relayed = await Promise.all([outbox.relayOnce(first), outbox.relayOnce(second)]);
    console.log(`${outbox.name}: the two relays published ${relayed.join(' + ')} of ${ids.length}`);

    expect(relayed[0] + relayed[1]).toBe(ids.length);
    const stream = (await outbox.onStream(probe, region)).filter((id) => ids.includes(id));
    expect([...stream].sort()).toEqual([...ids].sort());
    expect(await outbox.unconfirmed(db, ids)).toBe(0);
    expect(await Promise.all([outbox.relayOnce(first), outbox.relayOnce(second)])).toEqual([0, 0]);
  });
});
