import type { SmtpRelay, SmtpRelayOptions } from './smtp-relay';
import { RELAY_REPLIES } from './smtp-replies';
import { FakePort, KEY, MESSAGE, PRINCIPAL, RelayHarness } from '../../../test/support/relay-harness';

describe('SmtpRelay', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());
  const start = (port: FakePort, options: Partial<SmtpRelayOptions> = {}) => harness.start(port, options);
  const client = (relay: SmtpRelay, mode: 'tls' | 'starttls') => harness.client(relay, mode);
  const authenticated = (relay: SmtpRelay) => harness.authenticated(relay);

  describe('TLS and AUTH', () => {
    it('offers STARTTLS but not AUTH in the clear, and AUTH (PLAIN, LOGIN) only after STARTTLS', async () => {
      const relay = await start(new FakePort());
      const c = await client(relay, 'starttls');
      const plain = await c.command('EHLO client.test');
      expect(plain.split('\r\n')).toEqual([
        '250-smtp.us-east-1.herald.test Nice to meet you, [127.0.0.1]',
        '250-PIPELINING',
        '250-8BITMIME',
        '250-SMTPUTF8',
        '250-STARTTLS',
        '250 SIZE 4096',
      ]);
      expect(plain).not.toMatch(/AUTH/);
      expect(await c.command(`AUTH PLAIN ${Buffer.from(`\0herald\0${KEY}`).toString('base64')}`)).toBe('500 Error: command not recognized');
      expect(await c.command('MAIL FROM:<app@acme.test>')).toBe(`530 ${RELAY_REPLIES.startTlsFirst.text}`);
      expect(await c.startTls()).toBe('220 Ready to start TLS');
      const secure = await c.command('EHLO client.test');
      expect(secure).toContain('250-AUTH PLAIN LOGIN');
      expect(secure).not.toContain('STARTTLS');
    });

    it('answers MAIL before AUTH with 530 5.7.0 Authentication required, on both kinds of port', async () => {
      const relay = await start(new FakePort());
      const implicit = await client(relay, 'tls');
      const ehlo = await implicit.command('EHLO client.test');
      expect(ehlo).toContain('250-AUTH PLAIN LOGIN');
      expect(ehlo).not.toContain('STARTTLS');
      expect(await implicit.command('MAIL FROM:<app@acme.test>')).toBe('530 5.7.0 Authentication required');
      const upgraded = await client(relay, 'starttls');
      await upgraded.command('EHLO client.test');
      await upgraded.startTls();
      await upgraded.command('EHLO client.test');
      expect(await upgraded.command('MAIL FROM:<app@acme.test>')).toBe('530 5.7.0 Authentication required');
      expect(await upgraded.command('RCPT TO:<bob@example.com>')).toBe('530 5.7.0 Authentication required');
    });

    it('answers a wrong API key with 535 (PLAIN and LOGIN) and accepts the right one with LOGIN', async () => {
      const relay = await start(new FakePort());
      const c = await client(relay, 'tls');
      await c.command('EHLO client.test');
      expect(await c.command(`AUTH PLAIN ${Buffer.from('\0herald\0hr_wrong').toString('base64')}`)).toBe(
        '535 5.7.8 Authentication credentials invalid',
      );
      expect(await c.command('AUTH LOGIN')).toBe('334 VXNlcm5hbWU6');
      expect(await c.command(Buffer.from('herald').toString('base64'))).toBe('334 UGFzc3dvcmQ6');
      expect(await c.command(Buffer.from('hr_wrong').toString('base64'))).toBe('535 5.7.8 Authentication credentials invalid');
      expect(await c.command('AUTH CRAM-MD5')).toBe('504 Error: Unrecognized authentication type');
      await c.command('AUTH LOGIN');
      await c.command(Buffer.from('herald').toString('base64'));
      expect(await c.command(Buffer.from(KEY).toString('base64'))).toBe('235 Authentication successful');
    });

    it('answers an authentication that throws (database down) with 454, never 235', async () => {
      const port = new FakePort();
      port.authenticate = () => Promise.reject(new Error('database down'));
      const relay = await start(port);
      const c = await client(relay, 'tls');
      await c.command('EHLO client.test');
      expect(await c.command(`AUTH PLAIN ${Buffer.from(`\0herald\0${KEY}`).toString('base64')}`)).toBe(`454 ${RELAY_REPLIES.authTemporary.text}`);
    });
  });

  describe('a message', () => {
    it('is submitted with its envelope and raw bytes, and the 250 reply carries the email id', async () => {
      const port = new FakePort();
      const relay = await start(port);
      const c = await authenticated(relay);
      expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
      expect(await c.command('RCPT TO:<bob@example.com>')).toBe('250 Accepted');
      expect(await c.command('RCPT TO:<suppressed@example.com>')).toBe('550 5.1.1 The address is on the suppression list');
      expect(await c.command('RCPT TO:<hidden@example.com>')).toBe('250 Accepted');
      expect(await c.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
      expect(await c.command(`${MESSAGE}..leading dot\r\n.`)).toBe('250 2.0.0 OK email-1');
      expect(port.submits).toHaveLength(1);
      expect(port.submits[0]!.principal).toBe(PRINCIPAL);
      expect(port.submits[0]!.envelope).toEqual({ mailFrom: 'app@acme.test', rcptTo: ['bob@example.com', 'hidden@example.com'] });
      expect(port.submits[0]!.raw.toString()).toBe(`${MESSAGE}.leading dot\r\n`);
      expect(port.rcptCalls.map((r) => r.accepted)).toEqual([0, 1, 1]);
      // the session goes on: a second transaction on the same connection
      expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
    });

    it('survives clients that reset their connection mid-transaction (after RCPT, in DATA): other sessions go on', async () => {
      const port = new FakePort();
      const relay = await start(port);
      for (const mode of ['starttls', 'tls'] as const) {
        const dropped = mode === 'tls' ? await client(relay, 'tls') : await authenticated(relay);
        if (mode === 'tls') expect(await dropped.login(KEY, { starttls: false })).toBe('235 Authentication successful');
        expect(await dropped.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
        expect(await dropped.command('RCPT TO:<bob@example.com>')).toBe('250 Accepted');
        if (mode === 'tls') {
          expect(await dropped.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
          dropped.write('From: app@acme.test\r\nSubject: cut\r\n\r\nhalf a mess');
        }
        dropped.reset();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      const c = await authenticated(relay);
      expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
      expect(await c.command('RCPT TO:<bob@example.com>')).toBe('250 Accepted');
      expect(await c.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
      expect(await c.command(`${MESSAGE}.`)).toBe('250 2.0.0 OK email-1');
      expect(port.submits).toHaveLength(1);
    });

    it('passes the port refusals through: unverified from domain at MAIL, a refusal at the end of DATA', async () => {
      const port = new FakePort();
      port.submitResult = async () => ({ ok: false, reply: { code: 452, enhanced: '4.5.3', message: 'Daily quota exceeded, try again tomorrow' } });
      const relay = await start(port);
      const c = await authenticated(relay);
      expect(await c.command('MAIL FROM:<app@unverified.test>')).toBe('550 5.7.1 The unverified.test domain is not verified');
      await c.command('MAIL FROM:<app@acme.test>');
      await c.command('RCPT TO:<bob@example.com>');
      await c.command('DATA');
      expect(await c.command(`${MESSAGE}.`)).toBe('452 4.5.3 Daily quota exceeded, try again tomorrow');
    });

    it('answers 451 4.3.0, never 250, when the port throws', async () => {
      const port = new FakePort();
      port.submitResult = () => Promise.reject(new Error('connection terminated'));
      const relay = await start(port);
      const c = await authenticated(relay);
      await c.command('MAIL FROM:<app@acme.test>');
      await c.command('RCPT TO:<bob@example.com>');
      await c.command('DATA');
      expect(await c.command(`${MESSAGE}.`)).toBe('451 4.3.0 Temporary failure, try again later');
      port.mailFromError = new Error('redis down');
      expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('451 4.3.0 Temporary failure, try again later');
    });

    it('over SIZE is refused with 552 5.3.4, at MAIL FROM SIZE= and at the end of DATA', async () => {
      const port = new FakePort();
      const relay = await start(port);
      const c = await authenticated(relay);
      expect(await c.command('MAIL FROM:<app@acme.test> SIZE=5000')).toBe('552 Error: message exceeds fixed maximum message size 4096');
      await c.command('MAIL FROM:<app@acme.test>');
      await c.command('RCPT TO:<bob@example.com>');
      await c.command('DATA');
      expect(await c.command(`${MESSAGE}${'x'.repeat(76)}\r\n`.repeat(60) + '.')).toBe('552 5.3.4 Message exceeds fixed maximum message size 4096');
      expect(port.submits).toHaveLength(0);
    });

    it('with a bare LF is refused with 550 5.6.11, and a bare CR too', async () => {
      const port = new FakePort();
      const relay = await start(port);
      const c = await authenticated(relay);
      for (const [body, reply] of [
        ['line one\nline two\r\n', `550 ${RELAY_REPLIES.bareLf.text}`],
        ['line one\rline two\r\n', `550 ${RELAY_REPLIES.bareCr.text}`],
      ]) {
        await c.command('MAIL FROM:<app@acme.test>');
        await c.command('RCPT TO:<bob@example.com>');
        await c.command('DATA');
        expect(await c.command(`Subject: x\r\n\r\n${body}.`)).toBe(reply);
      }
      expect(RELAY_REPLIES.bareLf.text).toMatch(/^5\.6\.11 .*bare LF/);
      expect(port.submits).toHaveLength(0);
    });

    it.each([
      ['<LF>.<CR><LF>', '\n.\r\n'],
      ['<LF>.<LF>', '\n.\n'],
      ['<CR>.<CR><LF>', '\r.\r\n'],
    ])('smuggled with %s never becomes a second message', async (_name, sequence) => {
      const port = new FakePort();
      const relay = await start(port);
      const c = await authenticated(relay);
      c.write(
        'MAIL FROM:<app@acme.test>\r\nRCPT TO:<bob@example.com>\r\nDATA\r\n' +
          `Subject: first\r\n\r\nfirst${sequence}MAIL FROM:<app@acme.test>\r\nRCPT TO:<victim@example.com>\r\nDATA\r\nSubject: smuggled\r\n\r\nsmuggled\r\n.\r\n`,
      );
      expect(await c.reply()).toBe('250 Accepted');
      expect(await c.reply()).toBe('250 Accepted');
      expect(await c.reply()).toBe('354 End data with <CR><LF>.<CR><LF>');
      expect(await c.reply()).toMatch(/^550 5\.6\.11 Message refused: bare (LF|CR)/);
      // nothing else was answered: the smuggled commands were message content
      expect(await c.command('NOOP')).toBe('250 OK');
      expect(port.submits).toHaveLength(0);
      // and the session is still in step: a clean message goes through, alone
      c.write(`MAIL FROM:<app@acme.test>\r\nRCPT TO:<bob@example.com>\r\nDATA\r\n${MESSAGE}.\r\n`);
      expect([await c.reply(), await c.reply(), await c.reply(), await c.reply()]).toEqual([
        '250 Accepted',
        '250 Accepted',
        '354 End data with <CR><LF>.<CR><LF>',
        '250 2.0.0 OK email-1',
      ]);
      expect(port.submits.map((s) => s.envelope.rcptTo)).toEqual([['bob@example.com']]);
    });

    it('can be pipelined: MAIL, RCPT, RCPT, DATA and the message in one write', async () => {
      const port = new FakePort();
      const relay = await start(port);
      const c = await authenticated(relay);
      c.write(`MAIL FROM:<app@acme.test>\r\nRCPT TO:<bob@example.com>\r\nRCPT TO:<carol@example.com>\r\nDATA\r\n${MESSAGE}.\r\nQUIT\r\n`);
      const replies = [await c.reply(), await c.reply(), await c.reply(), await c.reply(), await c.reply(), await c.reply()];
      expect(replies).toEqual([
        '250 Accepted',
        '250 Accepted',
        '250 Accepted',
        '354 End data with <CR><LF>.<CR><LF>',
        '250 2.0.0 OK email-1',
        expect.stringMatching(/^221 /),
      ]);
      expect(port.submits[0]!.envelope.rcptTo).toEqual(['bob@example.com', 'carol@example.com']);
      await c.closed;
    });
  });
});
