import { startPrivateStack, type MxSink, type PrivateStack, type ScriptedMx } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { sendAll } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PER_DOMAIN = 6;
const to = (domain: string) => Array.from({ length: PER_DOMAIN }, (_, i) => `m${i}@${domain}`);

/**
 * Scenarios 7 and 8: misbehaving MXs side by side with a healthy one, on a private stack. One MX
 * never sends its banner (a tarpit), one trickles its replies a byte a second, one defers every
 * message (451), one refuses every message (550), one takes the data and drops the line before
 * its reply. Pass: the healthy destination is delivered at once, never held up by the others
 * (per-destination work, RFC 5321 timeouts enforced: greeting 2 s, command 5 s here); once the
 * bad MXs recover, their mail is delivered; the refused mail bounces once, with its webhook; the
 * only copies beyond the first are the messages an MX took and never acknowledged.
 */
describe('faults 7 and 8: slow, deferring, refusing and dropping MXs beside a healthy one', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('the healthy destination is not starved; everything recovers, bounces once or is delivered', async () => {
    world = await FaultWorld.start(stack);
    const healthy = await world.sink('ok.mx.test');
    const stalled = (await world.sink('stall.mx.test')).behave('stall');
    const deferring = (await world.sink('defer.mx.test')).behave({ defer: '451 4.7.1 try later' });
    const refusing = (await world.sink('refuse.mx.test')).behave({ reject: '550 5.7.1 no such user' });
    const trickling = (await world.scriptedMx('trickle.mx.test')).behave({ trickle: { byteMs: 1_000 } });
    const dropping = (await world.scriptedMx('drop.mx.test')).behave('drop-after-data');
    const { team } = await world.startRoles('mx');

    const bad = ['stall', 'defer', 'refuse', 'trickle', 'drop'].flatMap((name) => to(`${name}.mx.test`));
    const sentAt = Date.now();
    const accepted = await sendAll(world, team, [...bad, ...to('ok.mx.test')]);

    // Healthy mail goes out while every bad MX holds its connections.
    await healthy.waitForMessages(PER_DOMAIN, 30_000);
    const healthyAfterMs = Date.now() - sentAt;
    await waitUntil('the drop MX to take data it does not acknowledge', () => dropping.messages.length > 0, 30_000, 100);
    await waitUntil('the deferring MX to be retried', () => deferring.connections > 1, 30_000, 100);
    await sleep(3_000);
    const attempts = { stalled: stalled.connections, trickling: trickling.connections, deferring: deferring.connections };
    const dropped = dropping.messages.filter((m) => !m.acknowledged).flatMap((m) => m.recipients).length;

    // The MXs recover; what they held is delivered, on the retry schedule.
    for (const sink of [stalled, deferring] as MxSink[]) sink.behave('accept');
    for (const mx of [trickling, dropping] as ScriptedMx[]) mx.behave('accept');

    const ledger = await settleLedger(
      {
        db: world.db,
        accepted,
        sinks: [healthy, stalled, deferring, refusing, trickling, dropping],
        webhooks: { receiver: world.receiver, teamId: team.id },
      },
      60_000,
    );
    printLedger(
      `7/8 MX behaviours (healthy delivered after ${healthyAfterMs} ms; attempts while bad ${JSON.stringify(attempts)}; ${dropped} taken and dropped)`,
      ledger,
      dropped,
    );
    expect(healthyAfterMs).toBeLessThan(30_000);
    // Each bad MX was tried and given up on in time, then tried again: RFC 5321 timeouts, retries.
    expect(attempts.stalled).toBeGreaterThan(1);
    expect(attempts.trickling).toBeGreaterThan(1);
    expect(ledger.bounced).toBe(PER_DOMAIN);
    expect(ledger.delivered).toBe(ledger.accepted - PER_DOMAIN);
    expect(refusing.messages).toEqual([]);
    expectLedger(ledger, dropped);
    const bounced = world.receiver.at(`/${team.id}`).filter((d) => d.json.type === 'email.bounced');
    expect(bounced).toHaveLength(PER_DOMAIN);
  });
});
