import type { SmtpRelay, SmtpRelayOptions } from './smtp-relay';
import { RELAY_REPLIES } from './smtp-replies';
import { RawSmtpClient } from '@herald/testing';
import { FakePort, MESSAGE, RelayHarness } from '../../../test/support/relay-harness';

/** How long a relay session may last, and what closing the relay does to open ones. */
describe('SmtpRelay: timeouts and shutdown', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());
  const start = (port: FakePort, options: Partial<SmtpRelayOptions> = {}) => harness.start(port, options);
  const client = (relay: SmtpRelay, mode: 'tls' | 'starttls') => harness.client(relay, mode);
  const authenticated = (relay: SmtpRelay) => harness.authenticated(relay);

  it('closes an idle connection after SMTP_IDLE_TIMEOUT_MS', async () => {
    const relay = await start(new FakePort(), { idleTimeoutMs: 300 });
    const c = await client(relay, 'starttls');
    const started = Date.now();
    expect(await c.reply(3000)).toBe('421 Timeout - closing connection');
    await c.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('closes a session after SMTP_SESSION_TIMEOUT_MS even while it is busy', async () => {
    const relay = await start(new FakePort(), { sessionTimeoutMs: 600, idleTimeoutMs: 10_000 });
    const c = await authenticated(relay);
    const started = Date.now();
    const noops = setInterval(() => c.write('NOOP\r\n'), 50);
    try {
      let reply = '';
      while (!reply.startsWith('421')) reply = await c.reply(3000);
      expect(reply).toBe('421 4.4.2 Session too long, closing connection');
      await c.closed;
    } finally {
      clearInterval(noops);
    }
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('lets a message being submitted finish when the session runs out, then closes', async () => {
    const port = new FakePort();
    let release: () => void = () => undefined;
    port.submitResult = () => new Promise((resolve) => (release = () => resolve({ ok: true, id: 'slow-1' })));
    const relay = await start(port, { sessionTimeoutMs: 800 });
    const c = await authenticated(relay);
    c.write(`MAIL FROM:<app@acme.test>\r\nRCPT TO:<bob@example.com>\r\nDATA\r\n${MESSAGE}.\r\n`);
    for (let i = 0; i < 3; i++) await c.reply();
    await new Promise((r) => setTimeout(r, 1000));
    release();
    expect(await c.reply()).toBe('250 2.0.0 OK slow-1');
    expect(await c.reply()).toBe('421 4.4.2 Session too long, closing connection');
    await c.closed;
  });

  it('close() stops listening and sends idle sessions 421 at once', async () => {
    const relay = await start(new FakePort());
    const c = await authenticated(relay);
    const closing = relay.close();
    expect(await c.reply()).toBe(`421 ${RELAY_REPLIES.shuttingDown.text}`);
    await closing;
    await expect(RawSmtpClient.connect(relay.port('starttls'), 'starttls')).rejects.toThrow(/ECONNREFUSED/);
  });
});
