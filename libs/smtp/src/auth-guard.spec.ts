import { AuthGuard, clientKey } from './auth-guard';

describe('AuthGuard', () => {
  it('counts failures per connection and per address, and forgets an address when its window ends', () => {
    let now = 1_000;
    const guard = new AuthGuard({ perConnection: 2, perAddress: 3, windowMs: 60_000 }, () => now);
    expect(guard.failed('s1', '192.0.2.1')).toBe(false);
    expect(guard.failed('s1', '192.0.2.1')).toBe(true);
    guard.closed('s1');
    expect(guard.admits('192.0.2.1')).toBe(true);
    expect(guard.failed('s2', '192.0.2.1')).toBe(false);
    expect(guard.admits('192.0.2.1')).toBe(false);
    expect(guard.admits('::ffff:192.0.2.1')).toBe(false);
    expect(guard.admits('192.0.2.2')).toBe(true);
    now += 59_999;
    expect(guard.admits('192.0.2.1')).toBe(false);
    now += 1;
    expect(guard.admits('192.0.2.1')).toBe(true);
    // a new window starts with the next failure
    expect(guard.failed('s3', '192.0.2.1')).toBe(false);
    expect(guard.admits('192.0.2.1')).toBe(true);
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped one as IPv4', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(clientKey('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(clientKey('198.51.100.7')).toBe('198.51.100.7');
  });
});
