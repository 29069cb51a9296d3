import { readFileSync } from 'node:fs';
import { createTransport } from 'nodemailer';
import { RELAY_REPLIES } from '@herald/smtp';
import { freeLoopbackPort, RawSmtpClient, startPrivateStack, type PrivateStack } from '@herald/testing';
import { ConnectionFlood } from '../support/connection-flood';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { FaultWorld, type FaultTeam } from '../support/fault-world';
import { waitUntil, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(150_000);

/** The relay's defaults: SMTP_MAX_CONNECTIONS_PER_CLIENT and SMTP_MAX_CONNECTIONS. */
const PER_CLIENT = 100;
const TOTAL = 1000;
/** 10,000 connections from 8 addresses: each may hold PER_CLIENT, 800 in all, under TOTAL. */
const FLOOD_SOURCES = Array.from({ length: 8 }, (_, i) => `127.0.1.${i + 1}`);
const PER_SOURCE = 1250;
/** The well-behaved client's own address. */
const CLIENT = '127.0.0.2';

const rssMiB = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/**
 * Scenario 17's connection flood: 10,000 idle connections against a child `herald smtp` role
 * from eight addresses. Pass: the role stays up; each address holds its 100 connections
 * (SMTP_MAX_CONNECTIONS_PER_CLIENT) and the rest get `421 4.7.0` at connect; its resident memory
 * grows with the connections it holds, not with those it refuses; a client from another address
 * meanwhile sends its mail (250, delivered once). Then more addresses fill SMTP_MAX_CONNECTIONS:
 * everyone past it, that client included, gets `421 4.3.2`, until the flood lets go. The role's
 * bounce MX (port 25, open to any MTA) holds the same limits: 2,000 connections from one address,
 * 100 held.
 */
describe('fault 17: a connection flood against the SMTP relay', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('holds its limits, answers 421 past them, stays small and keeps serving another address', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.flood.test');
    const [relayPort, bounceMxPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const relaySettings = {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORTS: `${relayPort}:starttls`,
      BOUNCE_MX_HOST: '127.0.0.1',
      BOUNCE_MX_PORT: String(bounceMxPort),
      SMTP_MAX_CONNECTIONS: String(TOTAL),
      SMTP_MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT),
      // Idle connections are let go after a minute by default; the scenario must outlast it on a busy machine.
      SMTP_IDLE_TIMEOUT_MS: '600000',
    };
    const started = await Promise.allSettled([world.startRoles('flood'), world.role('smtp', relaySettings, { openFiles: 4 * TOTAL })] as const);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const { team } = (started[0] as PromiseFulfilledResult<{ team: FaultTeam }>).value;
    const smtp = (started[1] as PromiseFulfilledResult<WorkerProcess>).value;
    const flood = ConnectionFlood.start('127.0.0.1', relayPort);
    world.onClose(() => flood.close());
    const relay = createTransport({
      host: '127.0.0.1',
      port: relayPort,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'herald', pass: team.token },
      localAddress: CLIENT,
    });
    const send = async (n: number) => {
      const info = await relay.sendMail({ from: team.from, to: `client${n}@inbox.flood.test`, subject: `during the flood ${n}`, text: 'hi' });
      expect(info.response).toMatch(/^250 2\.0\.0 OK /);
      return info.response.split(' ').at(-1)!;
    };

    const before = rssMiB(smtp.pid);
    const wave = await flood.open(FLOOD_SOURCES, PER_SOURCE);
    const during = rssMiB(smtp.pid);
    const accepted = new Map([[await send(1), ['client1@inbox.flood.test']]]);
    console.log(
      `flood: ${wave.opened} connections from ${FLOOD_SOURCES.length} addresses in ${wave.ms} ms, ${wave.held} held; ` +
        `replies ${JSON.stringify(wave.bySource[FLOOD_SOURCES[0]])} per address (${JSON.stringify(wave.samples)}); ` +
        `smtp role RSS ${before.toFixed(1)} MiB before, ${during.toFixed(1)} MiB holding ${wave.held}`,
    );
    for (const source of FLOOD_SOURCES) expect(wave.bySource[source]).toEqual({ '220': PER_CLIENT, '421 4.7.0': PER_SOURCE - PER_CLIENT });
    expect(wave.samples['421 4.7.0']).toBe(`421 ${RELAY_REPLIES.tooManyClientConnections.text}`);
    expect(wave.held).toBe(FLOOD_SOURCES.length * PER_CLIENT);

    // Past the total: three more addresses ask for 300 places and get the last 200 (the client's
    // own may still be closing as they start: who gets the last place is a race), the rest 421 4.3.2.
    const more = ['127.0.1.9', '127.0.1.10', '127.0.1.11'];
    const full = await flood.open(more, PER_CLIENT);
    const atTotal = rssMiB(smtp.pid);
    const replies: Record<string, number> = {};
    for (const bySource of Object.values(full.bySource))
      for (const [reply, n] of Object.entries(bySource)) replies[reply] = (replies[reply] ?? 0) + n;
    console.log(`past the total: ${JSON.stringify(full.bySource)} (${JSON.stringify(full.samples)})`);
    expect(replies).toEqual({ '220': TOTAL - wave.held, '421 4.3.2': more.length * PER_CLIENT - (TOTAL - wave.held) });
    expect(full.samples['421 4.3.2']).toBe(`421 ${RELAY_REPLIES.tooManyConnections.text}`);
    expect(full.held).toBe(TOTAL);
    await expect(RawSmtpClient.connect(relayPort, 'starttls', '127.0.0.1', CLIENT)).rejects.toThrow(
      `unexpected greeting 421 ${RELAY_REPLIES.tooManyConnections.text}`,
    );
    await flood.close();
    const admitted = () =>
      RawSmtpClient.connect(relayPort, 'starttls', '127.0.0.1', CLIENT).then(
        (client) => {
          client.destroy();
          return true;
        },
        () => false,
      );
    await waitUntil('a place for the client once the flood let go', admitted, 10_000, 100);
    accepted.set(await send(2), ['client2@inbox.flood.test']);

    // The bounce MX of the same role (port 25 on the Internet) holds the same limits, counted apart.
    const mxFlood = ConnectionFlood.start('127.0.0.1', bounceMxPort);
    world.onClose(() => mxFlood.close());
    const mx = await mxFlood.open(['127.0.2.1'], 2 * TOTAL);
    console.log(`bounce MX: ${mx.opened} connections from one address in ${mx.ms} ms: ${JSON.stringify(mx.bySource)}`);
    expect(mx.bySource['127.0.2.1']).toEqual({ '220': PER_CLIENT, '421 4.7.0': 2 * TOTAL - PER_CLIENT });
    await mxFlood.close();
    const after = rssMiB(smtp.pid);
    console.log(
      `smtp role RSS: ${before.toFixed(1)} MiB before, ${during.toFixed(1)} holding ${wave.held} of ${wave.opened}, ` +
        `${atTotal.toFixed(1)} holding ${TOTAL}, ${after.toFixed(1)} after; ` +
        `${(((atTotal - before) * 1024) / TOTAL).toFixed(1)} KiB per held connection`,
    );
    expect(smtp.child.exitCode).toBeNull();
    // Bounded by what it holds (SMTP_MAX_CONNECTIONS), not by what it is sent: far under 10,000 sessions' worth.
    expect(atTotal - before).toBeLessThan(150);

    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger('17 10,000 idle connections, a client from another address meanwhile', ledger, 0);
    expectLedger(ledger, 0);
    expect(ledger.delivered).toBe(2);
    const { rows } = await world.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM emails WHERE team_id = $1`, [team.id]);
    expect(rows[0].n).toBe(2);
  });
});
