import { RELAY_REPLIES } from './smtp-replies';
import { FakePort, KEY, plainAuth, RelayHarness } from '../../../test/support/relay-harness';

const REFUSED = '535 5.7.8 Authentication credentials invalid';

/** AUTH: how many failures a connection and a client address get (Postfix's hard error limit and anvil). */
describe('AUTH', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());

  it('closes the connection after its third failed AUTH: 535, then 421 4.7.0, whatever the mechanism', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.greeted(relay);
    expect(await c.command(plainAuth('hr_wrong_1'))).toBe(REFUSED);
    expect(await c.command('AUTH LOGIN')).toBe('334 VXNlcm5hbWU6');
    expect(await c.command(Buffer.from('herald').toString('base64'))).toBe('334 UGFzc3dvcmQ6');
    expect(await c.command(Buffer.from('hr_wrong_2').toString('base64'))).toBe(REFUSED);
    expect(await c.command(plainAuth('hr_wrong_3'))).toBe(REFUSED);
    expect(await c.reply()).toBe(`421 ${RELAY_REPLIES.tooManyAuthFailures.text}`);
    await c.closed;
    expect(port.authCalls).toBe(3);
  });

  it('checks no pipelined AUTH after the limit: 535 three times, 421, closed, three keys looked at', async () => {
    const port = new FakePort();
    const relay = await harness.start(port);
    const c = await harness.greeted(relay);
    c.write(Array.from({ length: 20 }, (_, i) => `${plainAuth(`hr_wrong_${i}`)}\r\n`).join(''));
    expect([await c.reply(), await c.reply(), await c.reply(), await c.reply()]).toEqual([
      REFUSED,
      REFUSED,
      REFUSED,
      `421 ${RELAY_REPLIES.tooManyAuthFailures.text}`,
    ]);
    await c.closed;
    expect(c.pending()).toEqual([]);
    expect(port.authCalls).toBe(3);
  });

  it('does not count a temporary failure (454: Herald could not check the key) against the client', async () => {
    const port = new FakePort();
    let down = true;
    const authenticate = port.authenticate.bind(port);
    port.authenticate = (username, password) =>
      down
        ? Promise.resolve({ ok: false as const, reply: { code: 454, enhanced: '4.7.0', message: 'Temporary authentication failure' } })
        : authenticate(username, password);
    const relay = await harness.start(port);
    const c = await harness.greeted(relay);
    for (let i = 0; i < 5; i++) expect(await c.command(plainAuth(KEY))).toBe('454 4.7.0 Temporary authentication failure');
    down = false;
    expect(await c.command(plainAuth(KEY))).toBe('235 Authentication successful');
  });

  it('answers every AUTH from an address over its limit with 421 4.7.0 unchecked, the right key too, until its window ends', async () => {
    const port = new FakePort();
    const relay = await harness.start(port, { authLimits: { perConnection: 3, perAddress: 4, windowMs: 1500 } });
    // four failures from 127.0.0.2 over two connections
    for (const password of ['hr_wrong_1', 'hr_wrong_2']) {
      const c = await harness.greeted(relay, '127.0.0.2');
      expect(await c.command(plainAuth(password))).toBe(REFUSED);
      expect(await c.command(plainAuth(`${password}_again`))).toBe(REFUSED);
      c.end();
    }
    const calls = port.authCalls;
    const blocked = await harness.greeted(relay, '127.0.0.2');
    expect(await blocked.command(plainAuth(KEY))).toBe(`421 ${RELAY_REPLIES.addressBlocked.text}`);
    await blocked.closed;
    expect(port.authCalls).toBe(calls);
    // the implicit-TLS and STARTTLS listeners share the count
    const other = await harness.client(relay, 'starttls', '127.0.0.2');
    await other.command('EHLO client.test');
    await other.startTls();
    await other.command('EHLO client.test');
    expect(await other.command(plainAuth(KEY))).toBe(`421 ${RELAY_REPLIES.addressBlocked.text}`);
    // another address is not affected
    const neighbour = await harness.greeted(relay, '127.0.0.3');
    expect(await neighbour.command(plainAuth(KEY))).toBe('235 Authentication successful');
    // and once the window is over, the address may try again
    await new Promise((resolve) => setTimeout(resolve, 1800));
    const later = await harness.greeted(relay, '127.0.0.2');
    expect(await later.command(plainAuth(KEY))).toBe('235 Authentication successful');
  });

  it('lets a client that fails and then gives the right key carry on', async () => {
    const relay = await harness.start(new FakePort());
    const c = await harness.greeted(relay);
    expect(await c.command(plainAuth('hr_wrong'))).toBe(REFUSED);
    expect(await c.command(plainAuth('hr_wrong_again'))).toBe(REFUSED);
    expect(await c.command(plainAuth(KEY))).toBe('235 Authentication successful');
    expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
  });
});
