import { BroadcastRunner } from '@herald/broadcasts';
import { QuotaService } from '@herald/limits';
import type { MxSink } from '@herald/testing';
import { TestAudience } from '../broadcasts/audience';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { crashAfterCommit, envOf, startApiProcess, type ApiProcess } from '../support/herald-process';

jest.setTimeout(120_000);

const CONTACTS = 12;
const CHUNK = 5;
const LEASE_SECONDS = 2;
const UNSUBSCRIBED = ['c0@inbox.test', 'c7@inbox.test'];
const SUPPRESSED = ['c3@inbox.test'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * kill -9 of the api fanning a broadcast out, in the window between a chunk's email-plane
 * transaction (ledger rows and emails) and the cursor's move in the control plane: the
 * crash-after-commit failpoint kills the process at its first dispatch, which comes after that
 * commit. A new process writes the chunk again from the cursor: no contact gets a second email,
 * nobody is skipped, and the broadcast's counts are exact, although one of the chunk's contacts
 * unsubscribed in between (it got its email, so it is a recipient). The team's quota counts each
 * email once, plus at most one chunk: two chunks are written at once, and the second one's
 * reservation (in Redis, not in the chunk's transaction) is counted again when it is rewritten if
 * its transaction had not committed at the kill.
 */
describe('fault: kill -9 the api after a broadcast chunk committed, before its cursor moved', () => {
  let world: DeliveryWorld;
  let sink: MxSink;
  let team: TestTeam;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    world = await DeliveryWorld.start({ BROADCAST_CHUNK_SIZE: String(CHUNK), BROADCAST_LEASE_SECONDS: String(LEASE_SECONDS) });
    // Only the child processes fan out here: the in-process api serves the test's calls.
    await world.api.app.get(BroadcastRunner).stop();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    team = await world.team({ plan: 'pro-50k' });
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.stop('SIGKILL')));
    await world?.close();
  });

  const broadcastRow = async (id: string) =>
    (
      await world.db.query<{ status: string; cursor: string | null; recipients: number; skipped_unsubscribed: number; skipped_suppressed: number }>(
        `SELECT status, cursor, recipients, skipped_unsubscribed, skipped_suppressed FROM broadcasts WHERE id = $1`,
        [id],
      )
    ).rows[0]!;
  const ledger = async (id: string) =>
    (await world.db.query<{ contact_id: string }>(`SELECT contact_id FROM broadcast_recipients WHERE broadcast_id = $1`, [id])).rows.map(
      (r) => r.contact_id,
    );
  /** How many of the broadcast's emails went to each address. */
  const emailsByAddress = async (id: string) =>
    Object.fromEntries(
      (
        await world.db.query<{ address: string; n: number }>(
          `SELECT r.address, count(*)::int AS n FROM emails e JOIN email_recipients r ON r.email_id = e.id WHERE e.broadcast_id = $1 GROUP BY r.address`,
          [id],
        )
      ).rows.map((r) => [r.address, r.n]),
    );

  it('writes no second email for the chunk, skips nobody, and counts exactly', async () => {
    const audience = new TestAudience(team.resend);
    const segmentId = await audience.segment();
    const addresses = Array.from({ length: CONTACTS }, (_, i) => `c${i}@inbox.test`);
    const contactIds = await audience.contacts(
      addresses.map((email) => ({ email, unsubscribed: UNSUBSCRIBED.includes(email), segments: [{ id: segmentId }] })),
    );
    const addressOf = new Map(contactIds.map((id, i) => [id, addresses[i]!]));
    for (const email of SUPPRESSED) expect((await call(world.api.url, team.token, 'POST', '/suppressions', { email })).status).toBe(200);
    const expected = addresses.filter((a) => !UNSUBSCRIBED.includes(a) && !SUPPRESSED.includes(a));

    const env = envOf(world.api.config, {
      BROADCAST_CHUNK_SIZE: String(CHUNK),
      BROADCAST_LEASE_SECONDS: String(LEASE_SECONDS),
      DISPATCH_GRACE_SECONDS: '1',
      RECONCILE_INTERVAL_MS: '200',
    });
    const doomed = await startApiProcess(crashAfterCommit(env));
    apis.push(doomed);
    const created = await call(doomed.url, team.token, 'POST', '/broadcasts', {
      from: team.from('news'),
      segment_id: segmentId,
      subject: 'Once',
      text: 'Once. {{{RESEND_UNSUBSCRIBE_URL}}}',
      send: true,
    });
    expect(created.status).toBe(200);
    const id: string = created.body.id;
    expect((await doomed.exited)[1]).toBe('SIGKILL');

    // The first chunk's ledger rows and emails committed; the cursor and the counts did not move.
    const written = await ledger(id);
    expect(written.length).toBeGreaterThan(0);
    expect(await broadcastRow(id)).toMatchObject({ status: 'sending', cursor: null, recipients: 0, skipped_unsubscribed: 0 });
    expect(Object.keys(await emailsByAddress(id)).length).toBe(written.length);
    // One contact of that chunk unsubscribes before the chunk is written again: it already has its email.
    const late = written[0]!;
    expect((await call(world.api.url, team.token, 'PATCH', `/contacts/${late}`, { unsubscribed: true })).status).toBe(200);

    const survivor = await startApiProcess(env);
    apis.push(survivor);
    const deadline = Date.now() + 60_000;
    while ((await broadcastRow(id)).status !== 'sent') {
      if (Date.now() > deadline) throw new Error(`broadcast is ${JSON.stringify(await broadcastRow(id))}`);
      await sleep(100);
    }

    expect(await emailsByAddress(id)).toEqual(Object.fromEntries(expected.map((address) => [address, 1])));
    expect((await ledger(id)).map((contact) => addressOf.get(contact)).sort()).toEqual([...expected].sort());
    expect(await broadcastRow(id)).toMatchObject({
      recipients: expected.length,
      skipped_unsubscribed: UNSUBSCRIBED.length,
      skipped_suppressed: SUPPRESSED.length,
    });
    // The rerun chunk's reservation was given back: the quota counts each email once, and the chunk written beside it at most twice.
    const used = (await world.api.app.get(QuotaService).usage(team.teamId, 'pro-50k')).daily.used;
    expect(used).toBeGreaterThanOrEqual(expected.length);
    expect(used).toBeLessThanOrEqual(expected.length + CHUNK);
    await sink.waitForMessages(expected.length, 60_000);
    await sleep(1_500); // a duplicate would have arrived by now
    expect(sink.messages.flatMap((m) => m.recipients).sort()).toEqual([...expected].sort());
    console.log(
      `broadcast crash after commit: ${written.length} emails committed before the kill; ${addressOf.get(late)} unsubscribed since; quota used ${used} for ${expected.length} emails`,
    );
  });
});
