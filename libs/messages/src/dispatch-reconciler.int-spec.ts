import { DataSource } from 'typeorm';
import { SendPublisher } from '@herald/bus';
import { newId } from '@herald/core';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { NatsProbe } from '../../../test/support/nats-probe';
import { DispatchReconciler } from './dispatch-reconciler.service';
import { Dispatcher } from './dispatcher.service';
import { newEmailRow, normalizedEmail } from '../../../test/support/email-rows';
import { EmailRepository } from './email.repository';

/** The reconciler against the dispatch outbox and the workers' leases, on real Postgres and NATS. */
describe('DispatchReconciler', () => {
  let api: TestApi;
  let team: TestTeam;
  let emails: EmailRepository;
  let reconciler: DispatchReconciler;
  let db: DataSource;
  let probe: NatsProbe;

  beforeAll(async () => {
    // Its own passes only: the periodic one would race the test.
    api = await startTestApi({ RECONCILE_INTERVAL_MS: '600000' });
    team = await api.team();
    emails = api.app.get(EmailRepository);
    reconciler = api.app.get(DispatchReconciler);
    db = api.app.get(DataSource);
    probe = await NatsProbe.open(api.config);
  });

  afterAll(async () => {
    await probe?.close();
    await api?.close();
  });

  const row = (scheduledAt: Date | null, dispatchId?: string) =>
    newEmailRow(team.teamId, normalizedEmail(team.from('hello'), team.domain, { scheduledAt }), dispatchId);
  const outbox = async (id: string): Promise<string[] | null> =>
    ((await db.query(`SELECT email_ids FROM email_dispatches WHERE id = $1`, [id])) as { email_ids: string[] }[])[0]?.email_ids ?? null;

  it('publishes the emails of an overdue outbox row, skips one deleted meanwhile, and removes the row', async () => {
    const dispatchId = newId();
    const [kept, deleted] = [row(null, dispatchId), row(null, dispatchId)];
    await emails.insert([kept, deleted]);
    await db.query(`DELETE FROM emails WHERE id = $1`, [deleted.id]);
    await db.query(`UPDATE email_dispatches SET due_at = now() - interval '1 second' WHERE id = $1`, [dispatchId]);

    expect(await reconciler.runOnce()).toBe(1);
    const commands = await probe.sendCommands('us-east-1');
    expect(commands).toContain(kept.id);
    expect(commands).not.toContain(deleted.id);
    expect(await outbox(dispatchId)).toBeNull();
  });

  it('publishes a scheduled email once its time has come, not before', async () => {
    const soon = row(new Date(Date.now() + 1_500));
    const later = row(new Date(Date.now() + 3_600_000));
    await emails.insert([soon, later]);
    await reconciler.runOnce();
    expect(await probe.sendCommands('us-east-1')).not.toContain(soon.id);

    await new Promise((resolve) => setTimeout(resolve, 1_600));
    await reconciler.runOnce();
    const commands = await probe.sendCommands('us-east-1');
    expect(commands).toContain(soon.id);
    expect(commands).not.toContain(later.id);
    expect(await outbox(soon.id)).toBeNull();
    expect(await outbox(later.id)).toEqual([later.id]);
  });

  it("publishes a chunk's emails as one message with their domains, and confirms its outbox row", async () => {
    const dispatchId = newId();
    const chunk = [row(null, dispatchId), row(null, dispatchId), row(null, dispatchId)];
    await emails.insert(chunk);
    const before = await probe.sendCommands('us-east-1');

    expect(await api.app.get(Dispatcher).dispatchChunk(chunk)).toBe(3);
    expect((await probe.sendCommands('us-east-1')).slice(before.length)).toEqual(chunk.map((e) => e.id));
    const last = await probe.lastSendMessage('us-east-1');
    expect(last.subject).toBe(`${api.config.NATS_NAMESPACE}.us-east-1.send.chunk`);
    expect(last.msgId).toBe(dispatchId);
    expect(last.payload).toEqual({ teamId: team.teamId, region: 'us-east-1', emails: chunk.map((e) => ({ id: e.id, domains: ['example.com'] })) });
    await waitFor(async () => (await outbox(dispatchId)) === null);
  });

  it('leaves a chunk that could not be published to the relay, which publishes its emails one by one', async () => {
    const dispatchId = newId();
    const chunk = [row(null, dispatchId), row(null, dispatchId)];
    await emails.insert(chunk);
    const failed = jest.spyOn(api.app.get(SendPublisher), 'publishChunk').mockRejectedValueOnce(new Error('no responders'));
    try {
      expect(await api.app.get(Dispatcher).dispatchChunk(chunk)).toBe(0);
    } finally {
      failed.mockRestore();
    }
    expect(await outbox(dispatchId)).toEqual(chunk.map((e) => e.id));
    await db.query(`UPDATE email_dispatches SET due_at = now() - interval '1 second' WHERE id = $1`, [dispatchId]);
    expect(await reconciler.runOnce()).toBe(2);
    const commands = await probe.sendCommands('us-east-1');
    for (const e of chunk) expect(commands.filter((c) => c === e.id)).toHaveLength(1);
    expect(await outbox(dispatchId)).toBeNull();
  });

  it('refuses a chunk whose emails are not of one outbox row', async () => {
    const [a, b] = [row(null), row(null)];
    await expect(api.app.get(Dispatcher).dispatchChunk([a, b])).rejects.toThrow(`email ${b.id} is not of the chunk's team, region and outbox row`);
  });

  const leaseOf = async (id: string) =>
    (
      (await db.query(`SELECT dispatch_count, extract(epoch FROM dispatch_at - now()) AS due_in FROM emails WHERE id = $1`, [id])) as {
        dispatch_count: number;
        due_in: string | null;
      }[]
    )[0];
  const occurrences = async (id: string) => (await probe.sendCommands('us-east-1')).filter((c) => c === id).length;

  it('publishes an email whose worker lease ran out as its next generation, and keeps a lease one claim period ahead', async () => {
    const leased = row(null);
    await emails.insert([leased]);
    await db.query(`DELETE FROM email_dispatches WHERE id = $1`, [leased.dispatchId]);
    await db.query(`UPDATE emails SET dispatch_count = 1, dispatch_at = now() - interval '1 second' WHERE id = $1`, [leased.id]);

    expect(await reconciler.runOnce()).toBe(1);
    expect(await occurrences(leased.id)).toBe(1);
    const lease = await leaseOf(leased.id);
    expect(lease.dispatch_count).toBe(2);
    // DELIVERY_CLAIM_SECONDS (60 by default) ahead: if no worker claims it by then, it is published again.
    expect(Number(lease.due_in)).toBeGreaterThan(50);
  });

  it('a claimed email whose outbox row outlived the crash is left to its lease, and every lease republish reaches the stream', async () => {
    // The crash of issue #11: the send path published, a worker claimed (generation 1) and the
    // process died before the outbox row was confirmed; then the claim ran out. Both republishes
    // used to carry generation 1, JetStream dropped the second, and the email stayed 'sending'.
    const stranded = row(null);
    await emails.insert([stranded]);
    await db.query(`UPDATE email_dispatches SET due_at = now() - interval '1 second' WHERE id = $1`, [stranded.dispatchId]);
    await db.query(`UPDATE emails SET dispatch_count = 1, dispatch_at = now() - interval '1 second' WHERE id = $1`, [stranded.id]);

    expect(await reconciler.runOnce()).toBe(1);
    expect(await outbox(stranded.dispatchId)).toBeNull();
    expect(await occurrences(stranded.id)).toBe(1);

    // The command is consumed but claims nothing (or is lost): the lease comes due again, and the
    // next publish is a new generation, stored rather than dropped as a duplicate.
    await db.query(`UPDATE emails SET dispatch_at = now() - interval '1 second' WHERE id = $1`, [stranded.id]);
    expect(await reconciler.runOnce()).toBe(1);
    expect(await occurrences(stranded.id)).toBe(2);
    expect((await leaseOf(stranded.id)).dispatch_count).toBe(3);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
