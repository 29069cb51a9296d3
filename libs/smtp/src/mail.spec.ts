import { RELAY_REPLIES } from './smtp-replies';
import { FakePort, RelayHarness } from '../../../test/support/relay-harness';

/** MAIL FROM: the session's key is presented again, so a key revoked since AUTH ends the session. */
describe('MAIL FROM', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());

  it('with a key revoked since AUTH gets 530 5.7.0 and the connection is closed', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.authenticated(relay);
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
    expect(await c.command('RSET')).toBe('250 Flushed');
    port.revoked = true;
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe(`530 ${RELAY_REPLIES.keyRevoked.text}`);
    await c.closed;
    expect(RELAY_REPLIES.keyRevoked.text).toBe('5.7.0 Authentication required: the API key of this session was revoked or deleted');
  });

  it('when a pipelined transaction follows, answers none of it after the 530', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.authenticated(relay);
    port.revoked = true;
    c.write('MAIL FROM:<app@acme.test>\r\nRCPT TO:<bob@example.com>\r\nDATA\r\nSubject: x\r\n\r\nx\r\n.\r\n');
    expect(await c.reply()).toBe(`530 ${RELAY_REPLIES.keyRevoked.text}`);
    await c.closed;
    expect(c.pending()).toEqual([]);
    expect(port.rcptCalls).toEqual([]);
    expect(port.submits).toEqual([]);
  });

  it('answers 451 4.3.0 and keeps the session when the key cannot be checked just now', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.authenticated(relay);
    port.authenticate = () =>
      Promise.resolve({ ok: false as const, reply: { code: 454, enhanced: '4.7.0', message: 'Temporary authentication failure' } });
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe(`451 ${RELAY_REPLIES.tryLater.text}`);
    port.authenticate = () => Promise.reject(new Error('database down'));
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe(`451 ${RELAY_REPLIES.tryLater.text}`);
    expect(await c.command('NOOP')).toBe('250 OK');
  });
});
