import { RELAY_REPLIES } from './smtp-replies';
import { FakePort, MESSAGE, RelayHarness } from '../../../test/support/relay-harness';

/** DATA: the end of each message presents the session's key again before the message is submitted. */
describe('DATA', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());

  it('of a transaction begun before its key was revoked is refused with 530 5.7.0, not submitted, and the connection closed', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.authenticated(relay);
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
    expect(await c.command('RCPT TO:<bob@example.com>')).toBe('250 Accepted');
    expect(await c.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
    port.revoked = true;
    expect(await c.command(`${MESSAGE}.`)).toBe(`530 ${RELAY_REPLIES.keyRevoked.text}`);
    await c.closed;
    expect(port.submits).toEqual([]);
  });

  it('submits with the principal the key has now', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.authenticated(relay);
    const calls = port.authCalls;
    c.write(`MAIL FROM:<app@acme.test>\r\nRCPT TO:<bob@example.com>\r\nDATA\r\n${MESSAGE}.\r\n`);
    expect([await c.reply(), await c.reply(), await c.reply(), await c.reply()]).toEqual([
      '250 Accepted',
      '250 Accepted',
      '354 End data with <CR><LF>.<CR><LF>',
      '250 2.0.0 OK email-1',
    ]);
    // once at MAIL FROM, once at the end of DATA
    expect(port.authCalls - calls).toBe(2);
  });
});
