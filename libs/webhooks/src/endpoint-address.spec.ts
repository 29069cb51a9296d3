import { addressAllowList, hostAllowed } from './endpoint-address';
import { postWebhook } from './webhook-http.client';

describe('addressAllowList (WEBHOOK_ALLOWED_ADDRESSES)', () => {
  it('allows nothing when empty', () => {
    const none = addressAllowList([]);
    for (const address of ['127.0.0.1', '::1', '10.0.0.1']) expect(none(address)).toBe(false);
  });

  it('matches CIDRs and single addresses of both families, IPv4-mapped IPv6 as its IPv4', () => {
    const allowed = addressAllowList(['127.0.0.0/8', '::1', '10.1.2.3', 'fd00::/8']);
    for (const address of ['127.0.0.1', '127.255.0.9', '::1', '[::1]', '10.1.2.3', 'fd12::5', '::ffff:127.0.0.1'])
      expect({ address, ok: allowed(address) }).toEqual({ address, ok: true });
    for (const address of ['10.1.2.4', '169.254.169.254', '::2', 'fe80::1', '::ffff:10.0.0.1', 'localhost'])
      expect({ address, ok: allowed(address) }).toEqual({ address, ok: false });
  });
});

describe('hostAllowed (create/update check)', () => {
  const loopback = addressAllowList(['127.0.0.0/8', '::1']);
  const none = addressAllowList([]);

  it('lets public hosts through and refuses private ones not on the list', () => {
    expect(hostAllowed('example.com', none)).toBe(true);
    expect(hostAllowed('93.184.216.34', none)).toBe(true);
    for (const host of ['127.0.0.1', '[::1]', 'localhost', '10.0.0.1', '169.254.169.254', '[::ffff:169.254.169.254]']) {
      expect({ host, ok: hostAllowed(host, none) }).toEqual({ host, ok: false });
    }
  });

  it('lets allowlisted loopback through (localhost counts as 127.0.0.1 / ::1), but not other private ranges', () => {
    for (const host of ['127.0.0.1', '[::1]', 'localhost', 'api.localhost'])
      expect({ host, ok: hostAllowed(host, loopback) }).toEqual({ host, ok: true });
    for (const host of ['10.0.0.1', '169.254.169.254', '[fe80::1]']) expect({ host, ok: hostAllowed(host, loopback) }).toEqual({ host, ok: false });
  });
});

describe('postWebhook http switch (WEBHOOK_ALLOW_HTTP)', () => {
  it('refuses an http endpoint without connecting when http is not allowed', async () => {
    const resolve = jest.fn();
    const result = await postWebhook(
      { endpoint: 'http://hooks.example.com/x', headers: {}, body: '{}', timeoutMs: 1000, allowHttp: false, allowed: addressAllowList([]) },
      resolve,
    );
    expect(result).toEqual({
      kind: 'refused',
      error: 'refused: http: endpoints are not allowed (WEBHOOK_ALLOW_HTTP)',
      durationMs: expect.any(Number),
    });
    expect(resolve).not.toHaveBeenCalled();
  });
});
