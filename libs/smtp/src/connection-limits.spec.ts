import { RawSmtpClient } from '@herald/testing';
import { FakePort, RelayHarness } from '../../../test/support/relay-harness';
import { ConnectionGuard } from './connection-guard';
import { RELAY_REPLIES } from './smtp-replies';

describe('SmtpRelay: connection limits', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());

  it('refuses a client past SMTP_MAX_CONNECTIONS_PER_CLIENT with 421 at connect; another address still gets in', async () => {
    const relay = await harness.start(new FakePort(), { connectionLimits: { perClient: 3, total: 10 } });
    const held = await Promise.all([1, 2, 3].map(() => harness.client(relay, 'starttls', '127.0.0.5')));
    await expect(harness.client(relay, 'starttls', '127.0.0.5')).rejects.toThrow(
      `unexpected greeting 421 ${RELAY_REPLIES.tooManyClientConnections.text}`,
    );
    // every listener counts: the implicit-TLS port refuses the same address
    await expect(RawSmtpClient.connect(relay.port('tls'), 'tls', '127.0.0.1', '127.0.0.5')).rejects.toThrow(
      `unexpected greeting 421 ${RELAY_REPLIES.tooManyClientConnections.text}`,
    );
    const other = await harness.client(relay, 'starttls', '127.0.0.6');
    expect(other.greeting).toMatch(/^220 /);
    // a closed session frees its place
    held[0].destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect((await harness.client(relay, 'starttls', '127.0.0.5')).greeting).toMatch(/^220 /);
  });

  it('refuses anyone past SMTP_MAX_CONNECTIONS with 421 4.3.2', async () => {
    const relay = await harness.start(new FakePort(), { connectionLimits: { perClient: 10, total: 4 } });
    for (const address of ['127.0.0.7', '127.0.0.8', '127.0.0.9', '127.0.0.10']) await harness.client(relay, 'starttls', address);
    await expect(harness.client(relay, 'starttls', '127.0.0.11')).rejects.toThrow(`unexpected greeting 421 ${RELAY_REPLIES.tooManyConnections.text}`);
  });
});

describe('ConnectionGuard', () => {
  it('counts an IPv6 client by its /64 and forgets refused sessions', () => {
    const guard = new ConnectionGuard({ perClient: 2, total: 5 });
    expect(guard.admit('a', '2001:db8:1:2::1')).toBe('admitted');
    expect(guard.admit('b', '2001:db8:1:2::ffff')).toBe('admitted');
    expect(guard.admit('c', '2001:db8:1:2:abcd::1')).toBe('client-full');
    guard.closed('c');
    expect(guard.open).toBe(2);
    guard.closed('a');
    expect(guard.admit('d', '2001:db8:1:2::9')).toBe('admitted');
    expect(guard.admit('e', '::ffff:192.0.2.1')).toBe('admitted');
    expect(guard.admit('f', '192.0.2.1')).toBe('admitted');
    expect(guard.admit('g', '192.0.2.1')).toBe('client-full');
  });
});
