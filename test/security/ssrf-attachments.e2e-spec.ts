import { createServer, type Server } from 'node:http';
import { simpleParser } from 'mailparser';
import { freeSharedPort, type MxSink } from '@herald/testing';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(120_000);

/** The file server a customer may name (allowlisted: ATTACHMENT_ALLOWED_ADDRESSES, standing in for a public one). */
const PUBLIC = '127.0.0.1';
/** A server inside Herald's network. */
const INTERNAL = '127.0.0.60';

/**
 * SSRF through attachment `path`, as a fault scenario (issue 17): Herald's api and worker, an MX
 * sink, a public file server and an internal one. Each email is accepted (`path` is only checked
 * to be an http(s) URL at the API: resolving there would prove nothing about the worker's fetch),
 * then either delivered with the file or failed for good with `attachment_unavailable`, which the
 * customer hears as `email.failed`; the internal server never sees a request. The ledger: every
 * accepted email settled, none lost, none at the MX that should not be.
 */
describe('SSRF through attachment path, through the worker', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;
  let port: number;
  let servers: Server[];
  const inside: string[] = [];

  beforeAll(async () => {
    port = await freeSharedPort([PUBLIC, INTERNAL]);
    const outside = createServer((request, response) => {
      const redirect = /^\/redirect\?to=(.*)$/.exec(request.url ?? '');
      if (redirect) return void response.writeHead(302, { location: decodeURIComponent(redirect[1]!) }).end();
      response.writeHead(200, { 'content-type': 'text/plain' }).end('public file');
    });
    const internal = createServer((request, response) => {
      inside.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
    });
    servers = [outside, internal];
    await new Promise<void>((resolve) => outside.listen(port, PUBLIC, resolve));
    await new Promise<void>((resolve) => internal.listen(port, INTERNAL, resolve));
    world = await DeliveryWorld.start({ ATTACHMENT_ALLOWED_ADDRESSES: PUBLIC });
    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
  });
  afterAll(async () => {
    await world?.close();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('delivers the public file and fails, without a request inside, every path that leads inside', async () => {
    const cases: [label: string, path: string, outcome: 'delivered' | 'failed'][] = [
      ['public file', `http://${PUBLIC}:${port}/report.txt`, 'delivered'],
      ['internal address', `http://${INTERNAL}:${port}/secret`, 'failed'],
      ['cloud metadata', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'failed'],
      ['IPv6 loopback', `http://[::1]:${port}/secret`, 'failed'],
      ['IPv4-mapped internal', `http://[::ffff:${INTERNAL}]:${port}/secret`, 'failed'],
      ['decimal internal', `http://2130706492:${port}/secret`, 'failed'],
      ['redirect inside', `http://${PUBLIC}:${port}/redirect?to=${encodeURIComponent(`http://${INTERNAL}:${port}/secret`)}`, 'failed'],
      ['redirect to metadata', `http://${PUBLIC}:${port}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`, 'failed'],
    ];
    const sent: { label: string; id: string; to: string; outcome: string }[] = [];
    for (const [i, [label, path, outcome]] of cases.entries()) {
      const to = `ssrf${i}@inbox.test`;
      const reply = await call(world.api.url, team.token, 'POST', '/emails', {
        from: team.from(),
        to,
        subject: label,
        text: 'See the attachment.',
        attachments: [{ path, filename: 'file.txt' }],
      });
      expect({ label, status: reply.status }).toEqual({ label, status: 200 });
      sent.push({ label, id: reply.body.id, to, outcome });
    }

    const ledger: string[] = [];
    for (const email of sent) {
      const events = await world.waitForEvent(email.id, email.outcome === 'delivered' ? 'email.delivered' : 'email.failed', 20_000);
      const failed = events.find((e) => e.type === 'email.failed');
      const atSink = sink.messages.filter((m) => m.recipients.includes(email.to));
      ledger.push(
        `${email.label.padEnd(22)} ${email.outcome.padEnd(9)} at MX: ${atSink.length}  ${failed ? JSON.stringify(failed.data).slice(0, 140) : ''}`,
      );
      if (email.outcome === 'delivered') {
        expect(atSink).toHaveLength(1);
        const parsed = await simpleParser(atSink[0]!.raw);
        expect(parsed.attachments.map((a) => a.content.toString())).toEqual(['public file']);
      } else {
        expect({ label: email.label, atSink: atSink.length }).toEqual({ label: email.label, atSink: 0 });
        expect({ label: email.label, data: failed!.data }).toMatchObject({
          label: email.label,
          data: { failed: { reason: 'attachment_unavailable' } },
        });
        expect(events.map((e) => e.type)).not.toContain('email.delivered');
      }
    }
    console.log(`attachment path ledger (accepted ${sent.length}):\n${ledger.join('\n')}`);
    expect(inside).toEqual([]);
  });
});
