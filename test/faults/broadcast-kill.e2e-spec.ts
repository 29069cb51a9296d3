import { BroadcastRunner } from '@herald/broadcasts';
import type { MxSink } from '@herald/testing';
import { TestAudience } from '../broadcasts/audience';
import { call } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { envOf, startApiProcess, type ApiProcess } from '../support/herald-process';

jest.setTimeout(240_000);

const CONTACTS = 600;
/** Small chunks: many commits, so a kill lands between two of them even on a fast machine. */
const CHUNK = 5;
const LEASE_SECONDS = 2;
const UNSUBSCRIBED = (i: number) => i % 10 === 0;
/** Kills: each when the process running the fan-out has committed a chunk of its own. */
const KILLS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * kill -9 of the api process that is fanning a broadcast out, twice, at different points of the
 * fan-out (`herald api` as a real child process, run from dist/: `npm run build` first); a new
 * one takes the broadcast over once the dead one's lease runs out. Every contact still gets
 * exactly one email, and none is skipped.
 */
describe('fault: kill -9 the api in the middle of a broadcast fan-out', () => {
  let world: DeliveryWorld;
  let sink: MxSink;
  let api: ApiProcess | null = null;

  beforeAll(async () => {
    world = await DeliveryWorld.start({ BROADCAST_CHUNK_SIZE: String(CHUNK), BROADCAST_LEASE_SECONDS: String(LEASE_SECONDS) });
    // Only the child processes fan out here: the in-process api serves the test's calls.
    await world.api.app.get(BroadcastRunner).stop();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
  });
  afterAll(async () => {
    await api?.stop('SIGKILL');
    await world?.close();
  });

  const progress = async (id: string) =>
    (await world.db.query<{ status: string; recipients: number }>(`SELECT status, recipients FROM broadcasts WHERE id = $1`, [id])).rows[0]!;

  it('still sends each contact exactly one email', async () => {
    const team = await world.team({ plan: 'pro-50k' });
    const audience = new TestAudience(team.resend);
    const segmentId = await audience.segment();
    await audience.contacts(
      Array.from({ length: CONTACTS }, (_, i) => ({
        email: `k${i}@inbox.test`,
        first_name: `K${i}`,
        unsubscribed: UNSUBSCRIBED(i),
        segments: [{ id: segmentId }],
      })),
    );
    const expected = Array.from({ length: CONTACTS }, (_, i) => i)
      .filter((i) => !UNSUBSCRIBED(i))
      .map((i) => `k${i}@inbox.test`);

    const env = envOf(world.api.config, {
      BROADCAST_CHUNK_SIZE: String(CHUNK),
      BROADCAST_LEASE_SECONDS: String(LEASE_SECONDS),
      DISPATCH_GRACE_SECONDS: '1',
      RECONCILE_INTERVAL_MS: '200',
    });
    api = await startApiProcess(env);
    const created = await call(api.url, team.token, 'POST', '/broadcasts', {
      from: team.from('news'),
      segment_id: segmentId,
      subject: 'Hello {{{contact.first_name}}}',
      text: 'Once, {{{contact.first_name}}}. {{{RESEND_UNSUBSCRIBE_URL}}}',
      send: true,
    });
    expect(created.status).toBe(200);
    const id: string = created.body.id;

    // Each kill lands once the process running the fan-out (the first, then its replacement) has
    // committed a chunk of its own; on a fast machine the fan-out can finish first, which is
    // counted, not a kill mid-way.
    const midway: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const from = (await progress(id)).recipients;
      const deadline = Date.now() + 60_000;
      let now = await progress(id);
      while (now.status === 'sending' && now.recipients < from + CHUNK) {
        if (Date.now() > deadline) throw new Error(`the fan-out did not go on from ${from}: ${JSON.stringify(now)}`);
        await sleep(2);
        now = await progress(id);
      }
      if (now.status !== 'sending') break;
      api.child.kill('SIGKILL');
      expect((await api.exited)[1]).toBe('SIGKILL');
      const left = await progress(id);
      if (left.status !== 'sending') break;
      midway.push(left.recipients);
      api = await startApiProcess(env);
    }
    // At least the first kill landed mid-way, not after the end.
    expect(midway.length).toBeGreaterThanOrEqual(1);
    for (const count of midway) expect(count).toBeLessThan(expected.length);

    await sink.waitForMessages(expected.length, 120_000);
    const deadline = Date.now() + 30_000;
    while ((await progress(id)).status !== 'sent') {
      if (Date.now() > deadline) throw new Error(`broadcast is ${(await progress(id)).status}`);
      await sleep(100);
    }
    await sleep(2_000); // a duplicate would have arrived by now
    const got = sink.messages.flatMap((m) => m.recipients);
    // A copy too many names itself: its Message-IDs (one email sent twice, or two emails) and the emails on record.
    const copies = new Map<string, string[]>();
    for (const m of sink.messages) {
      const messageId = /^Message-ID:\s*(\S+)/im.exec(m.raw.toString('latin1'))?.[1] ?? '?';
      for (const r of m.recipients) copies.set(r, [...(copies.get(r) ?? []), messageId]);
    }
    const twice = [...copies].filter(([, ids]) => ids.length > 1);
    const records = twice.length
      ? (
          await world.db.query(
            `SELECT e.id, r.address, r.status, r.attempts FROM emails e JOIN email_recipients r ON r.email_id = e.id WHERE e.broadcast_id = $1 AND r.address = ANY($2::text[])`,
            [id, twice.map(([address]) => address)],
          )
        ).rows
      : [];
    expect({ twice, records }).toEqual({ twice: [], records: [] });
    expect(got.length).toBe(expected.length);
    expect([...new Set(got)].sort()).toEqual([...expected].sort());
    const { rows } = await world.db.query<{ n: number; contacts: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT contact_id)::int AS contacts FROM broadcast_recipients WHERE broadcast_id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({ n: expected.length, contacts: expected.length });
    expect((await progress(id)).recipients).toBe(expected.length);
    console.log(`broadcast kill: killed mid-way at ${midway.join(' and ')} of ${expected.length} emails written; ${got.length} delivered, each once`);
  });
});
