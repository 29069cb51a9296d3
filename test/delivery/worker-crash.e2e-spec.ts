import type { MxSink } from '@herald/testing';
import type { TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { sendConsumerState, startWorkerProcess, waitUntil, workerEnv, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

/** The claim a worker holds on its recipients (renewed while it lives): short, so recovery is quick. */
const CLAIM_SECONDS = 10;
/** Send commands a worker holds at once (DELIVERY_CONCURRENCY, the consumer's max_ack_pending). */
const CONCURRENCY = 200;
const EMAILS = 2_000;
const BATCH = 100;
/** The sinks have received at least this many when the worker is killed. */
const KILL_AFTER = 300;
/** From the kill until every email is delivered: the claim's expiry plus the rest of the run, with room for a loaded machine. */
const RECOVERY_MS = 60_000;

interface RecipientState {
  email_id: string;
  address: string;
  status: string;
  attempts: number;
}

/**
 * The worker role as a real child process (`node bin/herald.js worker`), the api (with its
 * dispatch reconciler) and the MX sinks in this process: kill -9 of a worker in the middle of a
 * run loses nothing and sends again only what the MX accepted and Herald had not yet recorded;
 * SIGTERM finishes the SMTP transactions in flight, records them and hands the rest back. Each
 * test has its own world (schema, NATS namespace): a worker killed in one holds nothing of the other's.
 */
function workerWorld() {
  const w = {} as {
    world: DeliveryWorld;
    team: TestTeam;
    env: NodeJS.ProcessEnv;
    workers: WorkerProcess[];
    worker(options?: { waitReady?: boolean; extra?: Record<string, string> }): Promise<WorkerProcess>;
    states(emailIds: string[]): Promise<RecipientState[]>;
    delivered(emailIds: string[]): Promise<Map<string, { delivered: number; sent: number; lastEvent: string }>>;
  };
  w.workers = [];
  w.worker = async (options = {}) => {
    const started = await startWorkerProcess({ ...w.env, ...options.extra }, { waitReady: options.waitReady });
    w.workers.push(started);
    return started;
  };
  w.states = async (emailIds) =>
    (
      await w.world.db.query<RecipientState>(
        `SELECT email_id, address, status, attempts FROM email_recipients WHERE email_id = ANY($1::uuid[]) ORDER BY address`,
        [emailIds],
      )
    ).rows;
  w.delivered = async (emailIds) => {
    const { rows } = await w.world.db.query<{ id: string; last_event: string; delivered: string; sent: string }>(
      `SELECT e.id, e.last_event,
              (SELECT count(*) FROM email_events v WHERE v.email_id = e.id AND v.type = 'email.delivered') AS delivered,
              (SELECT count(*) FROM email_events v WHERE v.email_id = e.id AND v.type = 'email.sent') AS sent
         FROM emails e WHERE e.id = ANY($1::uuid[])`,
      [emailIds],
    );
    return new Map(rows.map((r) => [r.id, { delivered: Number(r.delivered), sent: Number(r.sent), lastEvent: r.last_event }]));
  };

  beforeAll(async () => {
    w.world = await DeliveryWorld.start({ DELIVERY_CLAIM_SECONDS: String(CLAIM_SECONDS) }, { worker: false });
    w.team = await w.world.team({ plan: 'pro-50k', rateLimit: 100_000 });
    w.env = workerEnv(w.world.api.config, { LOG_LEVEL: 'warn', DELIVERY_CONCURRENCY: String(CONCURRENCY) });
  });
  afterAll(async () => {
    await Promise.all(w.workers.map((p) => p.stop('SIGKILL')));
    await w.world?.close();
  });
  return w;
}

const countBy = (rows: { status: string }[]) =>
  rows.reduce<Record<string, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});

describe('worker: kill -9 mid-run (herald worker as a child process)', () => {
  const w = workerWorld();

  it('kill -9 mid-run of 2,000 emails: every email reaches the sinks, duplicates only from the 250-to-record window', async () => {
    const domains = ['alpha.crash.test', 'bravo.crash.test', 'charlie.crash.test', 'delta.crash.test'];
    const sinks: MxSink[] = [];
    for (const domain of domains) {
      const sink = await w.world.sink({ starttls: false });
      w.world.route(domain, { host: `mx.${domain}`, address: sink.host });
      sinks.push(sink);
    }
    const received = () => sinks.reduce((sum, s) => sum + s.received, 0);

    // Accepted with no worker running: the whole run waits in the send stream.
    const addressOf = new Map<string, string>();
    for (let offset = 0; offset < EMAILS; offset += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, i) => `r${offset + i}@${domains[(offset + i) % domains.length]}`);
      const { data, error } = await w.team.resend.batch.send(
        batch.map((to) => ({ from: w.team.from(), to, subject: `Crash ${to}`, text: `for ${to}` })),
      );
      if (error) throw new Error(JSON.stringify(error));
      expect(data!.data).toHaveLength(BATCH);
      data!.data.forEach(({ id }, i) => addressOf.set(id, batch[i]));
    }
    const ids = [...addressOf.keys()];
    expect(ids).toHaveLength(EMAILS);

    // The first worker runs until the sinks have some of the run, then dies without warning.
    const first = await w.worker({ waitReady: false });
    const startedAt = Date.now();
    await waitUntil(`${KILL_AFTER} emails at the sinks`, () => received() >= KILL_AFTER || first.child.exitCode !== null, 60_000, 2);
    expect(first.child.exitCode).toBeNull();
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    const [, signal] = await first.exited;
    expect(signal).toBe('SIGKILL');

    // What the dead worker left: claimed recipients ('sending') are the only ones that can have been sent unrecorded.
    const atKill = await w.states(ids);
    const sendingAtKill = new Map(atKill.filter((r) => r.status === 'sending').map((r) => [r.address, r]));
    const receivedAtKill = received();
    const countsAtKill = countBy(atKill);
    expect(receivedAtKill).toBeLessThan(EMAILS);
    expect(sendingAtKill.size).toBeGreaterThan(0);

    const consumerAtKill = await sendConsumerState(w.world.api.config);

    // A new worker picks up: what was never claimed from the stream, and the claimed recipients once
    // their claim runs out. Within a minute: the claim is 10 s; the rest is the new worker's own pace.
    await w.worker();
    let last: RecipientState[] = [];
    await waitUntil(
      'every recipient delivered after the restart',
      async () => {
        last = await w.states(ids);
        return last.every((r) => r.status === 'delivered') || JSON.stringify(countBy(last));
      },
      RECOVERY_MS,
      200,
    ).catch(async (error: Error) => {
      // The send consumer tells why: commands the dead worker held count against max_ack_pending until ack_wait.
      throw new Error(
        `${error.message}; at the kill: ${JSON.stringify({ receivedAtKill, countsAtKill, consumerAtKill })}; send consumer now: ${JSON.stringify(await sendConsumerState(w.world.api.config))}`,
      );
    });
    const recoveredAt = Date.now();

    // Each email: one email.sent, one email.delivered (the record is fenced and idempotent), last_event delivered.
    const events = await w.delivered(ids);
    const wrong = ids.filter((id) => {
      const e = events.get(id);
      return !e || e.delivered !== 1 || e.sent !== 1 || e.lastEvent !== 'delivered';
    });
    expect(wrong.map((id) => ({ id, ...events.get(id) }))).toEqual([]);

    // The sinks: every accepted email at least once, nothing else.
    const receipts = new Map<string, number[]>();
    for (const sink of sinks) {
      for (const message of sink.messages) {
        for (const address of message.recipients) receipts.set(address, [...(receipts.get(address) ?? []), message.receivedAt]);
      }
    }
    const expected = new Set(addressOf.values());
    expect([...receipts.keys()].filter((a) => !expected.has(a))).toEqual([]);
    expect([...expected].filter((a) => !receipts.has(a))).toEqual([]);

    const duplicates = [...receipts].filter(([, times]) => times.length > 1);
    const report = duplicates.map(([address, times]) => {
      const claimed = sendingAtKill.get(address);
      // Relative to the kill: the first copy arrived before it (the MX's 250), the next after the claim ran out.
      const at = times.map((t) => `${t - killedAt >= 0 ? '+' : ''}${t - killedAt} ms`).join(', ');
      const cause = claimed
        ? `'sending' at the kill (attempt ${claimed.attempts}): accepted by the MX, not yet recorded; resent once the ${CLAIM_SECONDS} s claim ran out`
        : 'NOT claimed at the kill: no window explains it';
      return { address, claimed: claimed !== undefined, line: `${address} x${times.length} (${at} from the kill): ${cause}` };
    });
    // The window: how long before the kill the oldest accepted-but-unrecorded email had its 250.
    const window = duplicates.length ? Math.max(...duplicates.map(([, times]) => killedAt - times[0])) : 0;
    const summary = {
      emails: EMAILS,
      msToKill: killedAt - startedAt,
      receivedAtKill,
      recipientsAtKill: countsAtKill,
      consumerAtKill,
      duplicates: duplicates.length,
      oldestUnrecordedMsBeforeKill: window,
      recoveryMs: recoveredAt - killedAt,
      attemptsAfter: countBy(last.map((r) => ({ status: `attempts=${r.attempts}` }))),
    };
    console.log(`worker kill -9: ${JSON.stringify(summary)}\nduplicates (${duplicates.length}):\n${report.map((d) => d.line).join('\n')}`);

    // A duplicate is only ever an email the dead worker had claimed and not recorded.
    expect(report.filter((d) => !d.claimed).map((d) => d.line)).toEqual([]);
    expect(duplicates.length).toBeLessThanOrEqual(sendingAtKill.size);
    // And nothing arrives more than twice (one kill, one window).
    expect(duplicates.filter(([, times]) => times.length > 2)).toEqual([]);
  });
});

describe('worker: SIGTERM drains (herald worker as a child process)', () => {
  const w = workerWorld();

  it('SIGTERM finishes and records the transactions in flight, hands the rest back, and exits 0', async () => {
    const slow = (await w.world.sink({ starttls: false })).behave({ delayMs: 3_000 });
    w.world.route('slow.crash.test', { host: 'mx.slow.crash.test', address: slow.host });
    // Two transactions at once to the slow MX: the others wait in the destination's queue. The
    // reply to the end of data may take longer than the world's 2 s command timeout.
    const draining = await w.worker({ extra: { DELIVERY_CONNECTIONS_PER_DESTINATION: '2', DELIVERY_COMMAND_TIMEOUT_MS: '10000' } });

    const addresses = Array.from({ length: 6 }, (_, i) => `t${i}@slow.crash.test`);
    const addressOf = new Map<string, string>();
    for (const to of addresses) {
      const { data, error } = await w.team.resend.emails.send({ from: w.team.from(), to, subject: `Drain ${to}`, text: 'hi' });
      if (error) throw new Error(JSON.stringify(error));
      addressOf.set(data!.id, to);
    }
    const ids = [...addressOf.keys()];

    // Two SMTP transactions are open (the sink holds each for 3 s after DATA), the rest claimed and queued.
    await waitUntil('two transactions in flight', async () => {
      const rows = await w.states(ids);
      return (
        (slow.connections >= 2 && rows.every((r) => r.status === 'sending')) || `${slow.connections} connection(s), ${JSON.stringify(countBy(rows))}`
      );
    });
    expect(slow.received).toBe(0);
    const termAt = Date.now();
    draining.child.kill('SIGTERM');
    const [code, signal] = await draining.exited;
    const exitedAt = Date.now();
    expect({ code, signal }).toEqual({ code: 0, signal: null });

    // The process waited for the MX's replies: what the sink accepted is delivered and recorded at exit.
    const accepted = slow.messages.flatMap((m) => m.recipients);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(slow.messages.every((m) => m.receivedAt <= exitedAt && m.receivedAt >= termAt)).toBe(true);
    const atExit = await w.states(ids);
    const byAddress = new Map(atExit.map((r) => [r.address, r]));
    expect(atExit.filter((r) => r.status === 'sending')).toEqual([]);
    for (const address of accepted) expect(byAddress.get(address)!.status).toBe('delivered');
    const eventsAtExit = await w.delivered(ids);
    for (const [id, address] of addressOf) {
      const state = byAddress.get(address)!;
      const events = eventsAtExit.get(id)!;
      if (accepted.includes(address)) expect(events).toMatchObject({ delivered: 1, lastEvent: 'delivered' });
      // Not started: handed back with a short retry (or never taken off the stream), not delivered.
      else
        expect({ address, status: state.status, delivered: events.delivered }).toEqual({
          address,
          status: expect.stringMatching(/^(deferred|queued)$/),
          delivered: 0,
        });
    }
    const handedBack = atExit.filter((r) => r.status !== 'delivered');
    expect(handedBack.length).toBeGreaterThanOrEqual(1);
    const { rows: responses } = await w.world.db.query<{ last_response: string | null; retry_in_s: number | null }>(
      `SELECT last_response, extract(epoch FROM next_attempt_at - now()) AS retry_in_s FROM email_recipients WHERE email_id = ANY($1::uuid[]) AND status = 'deferred'`,
      [ids],
    );
    for (const r of responses) {
      expect(r.last_response).toContain('shutting down');
      expect(Number(r.retry_in_s)).toBeLessThan(30);
    }
    console.log(
      `worker SIGTERM: in flight ${accepted.length}, handed back ${handedBack.length} (${JSON.stringify(countBy(handedBack))}), exit ${exitedAt - termAt} ms after SIGTERM`,
    );

    // A new worker delivers what was handed back, each email once.
    slow.behave('accept');
    await w.worker();
    await waitUntil(
      'the handed-back emails delivered',
      async () => {
        const rows = await w.states(ids);
        return rows.every((r) => r.status === 'delivered') || JSON.stringify(countBy(rows));
      },
      60_000,
      200,
    );
    const counts = new Map<string, number>();
    for (const address of slow.messages.flatMap((m) => m.recipients)) counts.set(address, (counts.get(address) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(addresses.map((a) => [a, 1])));
    const events = await w.delivered(ids);
    for (const id of ids) expect(events.get(id)).toMatchObject({ delivered: 1, sent: 1, lastEvent: 'delivered' });
  });
});
