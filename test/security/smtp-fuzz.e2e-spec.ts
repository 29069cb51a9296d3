import fc from 'fast-check';
import { RelayHost } from '@herald/smtp';
import { RawSmtpClient, type MxSink } from '@herald/testing';
import type { TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(180_000);

const RUNS = 60;
/** A reply line: three digits, then a space or (continuation) a hyphen. */
const REPLY = /^[2-5]\d\d([ -].*)?$/;

type Step = { kind: 'line'; line: string } | { kind: 'data'; body: string };

/**
 * Bad input at the SMTP edge (issue 17), generated with fast-check: authenticated sessions on the
 * relay's STARTTLS port, each a run of commands near the protocol (MAIL and RCPT with odd
 * addresses and parameters, verbs out of order, unknown verbs, stray bytes) and message data with
 * generated header blocks (bare CR and LF, NUL, 8-bit bytes, overlong lines, header injection).
 * Every reply is a well-formed SMTP reply, the relay never drops a session without answering the
 * command it was sent, exactly the messages answered 250 after DATA are stored, and the relay
 * still takes a clean message afterwards. AUTH is left out: wrong keys lock an address out
 * (test/relay/key-revocation.e2e-spec.ts).
 */
describe('bad input at the SMTP edge (fast-check)', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;
  let relay: RelayHost;

  beforeAll(async () => {
    world = await DeliveryWorld.start();
    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    relay = world.smtp.get(RelayHost);
  });
  afterAll(() => world?.close());

  const emails = async () => Number((await world.db.query('SELECT count(*)::int AS n FROM emails WHERE team_id = $1', [team.teamId])).rows[0].n);

  it('answers every generated session in SMTP terms and stores exactly what it accepted', async () => {
    const oddText = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom(
        '',
        ' ',
        '<>',
        '@',
        'a@b',
        'x'.repeat(2000),
        '"a b"@inbox.test',
        'a%b@inbox.test',
        '@relay.test:a@inbox.test',
        'a@[127.0.0.1]',
        'ü@inbox.test',
      ),
    );
    const address = fc.oneof(
      fc.constant(team.from()),
      fc.nat(50).map((n) => `r${n}@inbox.test`),
      oddText,
      oddText.map((s) => `${s}@inbox.test`),
    );
    const params = fc.constantFrom(
      '',
      ' SIZE=10',
      ' SIZE=99999999999',
      ' BODY=8BITMIME',
      ' SMTPUTF8',
      ' NOTIFY=NEVER',
      ' RET=HDRS',
      ' X=Y',
      ' SIZE=-1',
    );
    const line: fc.Arbitrary<Step> = fc
      .oneof(
        fc.tuple(address, params).map(([a, p]) => `MAIL FROM:<${a}>${p}`),
        fc.tuple(address, params).map(([a, p]) => `RCPT TO:<${a}>${p}`),
        address.map((a) => `MAIL FROM:${a}`),
        fc.constantFrom(
          'NOOP',
          'RSET',
          'HELP',
          'VRFY postmaster',
          'EXPN list',
          'EHLO again.test',
          'HELO x',
          'STARTTLS',
          'TURN',
          'ETRN x',
          'BDAT 5 LAST',
          'DATA',
        ),
        fc.string({ unit: 'binary-ascii', maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, ' ')),
      )
      .map((l) => ({ kind: 'line' as const, line: l }));
    const headerLine = fc.oneof(
      fc.constantFrom(
        `From: ${team.from()}`,
        'To: r1@inbox.test',
        'Subject: hi',
        'Subject: a\rBcc: victim@evil.test',
        'Subject: a\nBcc: victim@evil.test',
        'X-A: \u0000',
      ),
      fc.tuple(fc.string({ unit: 'binary-ascii', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 60 })).map(([k, v]) => `${k}: ${v}`),
      fc.constant(`X-Long: ${'y'.repeat(1200)}`),
    );
    const data: fc.Arbitrary<Step> = fc
      .tuple(fc.boolean(), fc.array(headerLine, { maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 200 }))
      .map(([addressed, headers, body]) => {
        // Half the messages carry a valid From and To before the generated fields, so some are accepted.
        const fields = addressed ? [`From: ${team.from()}`, 'To: fuzz@inbox.test', ...headers] : headers;
        return { kind: 'data' as const, body: `${fields.join('\r\n')}\r\n\r\n${body.replace(/\r\n\.\r\n/g, '\r\n..\r\n')}` };
      });
    const session = fc.array(fc.oneof({ weight: 4, arbitrary: line }, { weight: 1, arbitrary: data }), { minLength: 1, maxLength: 8 });

    const before = await emails();
    let accepted = 0;
    const codes: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(session, async (steps) => {
        const client = await RawSmtpClient.connect(relay.port('starttls'), 'starttls');
        try {
          expect(await client.login(team.token, { starttls: true })).toMatch(/^235 /);
          for (const step of steps) {
            let reply: string;
            if (step.kind === 'data') {
              await client.command(`MAIL FROM:<${team.from()}>`);
              await client.command('RCPT TO:<fuzz@inbox.test>');
              const go = await client.command('DATA');
              codes[go.slice(0, 3)] = (codes[go.slice(0, 3)] ?? 0) + 1;
              if (!go.startsWith('354')) continue;
              client.write(`${step.body}\r\n.\r\n`);
              reply = await client.reply();
              if (reply.startsWith('250')) accepted++;
            } else {
              reply = await client.command(step.line);
              // A DATA the envelope allowed: end it at once with an empty message.
              if (reply.startsWith('354')) {
                client.write('\r\n.\r\n');
                const end = await client.reply();
                if (end.startsWith('250')) accepted++;
              }
            }
            for (const l of reply.split('\r\n')) expect({ step, line: l }).toEqual({ step, line: expect.stringMatching(REPLY) });
            codes[reply.slice(0, 3)] = (codes[reply.slice(0, 3)] ?? 0) + 1;
            if (reply.startsWith('421') || reply.startsWith('221')) break; // the session ends, and the relay said so
          }
        } finally {
          client.destroy();
        }
      }),
      { numRuns: RUNS },
    );
    console.log(`SMTP replies to ${RUNS} generated sessions: ${JSON.stringify(codes)}; ${accepted} messages accepted`);
    expect(await emails()).toBe(before + accepted);

    // Still serving: a clean message is taken.
    const client = await RawSmtpClient.connect(relay.port('starttls'), 'starttls');
    await client.login(team.token, { starttls: true });
    expect(await client.command(`MAIL FROM:<${team.from()}>`)).toMatch(/^250 /);
    expect(await client.command('RCPT TO:<clean@inbox.test>')).toMatch(/^250 /);
    expect(await client.command('DATA')).toMatch(/^354 /);
    client.write(`From: ${team.from()}\r\nTo: clean@inbox.test\r\nSubject: clean\r\n\r\nok\r\n.\r\n`);
    expect(await client.reply()).toMatch(/^250 2\.0\.0 OK /);
    client.destroy();
  });
});
