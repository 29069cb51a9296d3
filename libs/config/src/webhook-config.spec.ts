import { loadConfig } from './load-config';

describe('webhook configuration', () => {
  it('defaults to the production values: Resend’s schedule, https only, nothing allowlisted', () => {
    const c = loadConfig({});
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(c.WEBHOOK_ATTEMPT_TIMEOUT_MS).toBe(15000);
    expect(c.WEBHOOK_CONCURRENCY).toBe(256);
    expect(c.WEBHOOK_CONCURRENCY_PER_ENDPOINT).toBe(4);
    expect(c.WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT).toBeUndefined();
    expect(c.WEBHOOK_ALLOW_HTTP).toBe(false);
    expect(c.WEBHOOK_ALLOWED_ADDRESSES).toEqual([]);
  });

  it('parses the lists', () => {
    const c = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '0, 1,2',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8, ::1,10.1.2.3,fd00::/8',
    });
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 1, 2]);
    expect(c.WEBHOOK_ALLOW_HTTP).toBe(true);
    expect(c.WEBHOOK_ALLOWED_ADDRESSES).toEqual(['127.0.0.0/8', '::1', '10.1.2.3', 'fd00::/8']);
  });

  it('refuses malformed values, naming the variable', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0,5s' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: ',' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_ATTEMPT_TIMEOUT_MS: '0' })).toThrow(/WEBHOOK_ATTEMPT_TIMEOUT_MS/);
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY_PER_ENDPOINT: '0' })).toThrow(/WEBHOOK_CONCURRENCY_PER_ENDPOINT/);
    expect(() => loadConfig({ WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT: '0' })).toThrow(/WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT/);
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY_PER_ENDPOINT: '8', WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT: '7' })).toThrow(
      /WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT.*at least WEBHOOK_CONCURRENCY_PER_ENDPOINT/,
    );
    expect(
      loadConfig({ WEBHOOK_CONCURRENCY_PER_ENDPOINT: '8', WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT: '8' }).WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT,
    ).toBe(8);
    expect(() => loadConfig({ WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow(/WEBHOOK_ALLOW_HTTP/);
    for (const bad of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0']) {
      expect(() => loadConfig({ WEBHOOK_ALLOWED_ADDRESSES: bad })).toThrow(/WEBHOOK_ALLOWED_ADDRESSES.*must be an IP address or CIDR/);
    }
  });
});
