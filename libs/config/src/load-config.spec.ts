import { ConfigError, loadConfig } from './load-config';

describe('loadConfig', () => {
  it('applies defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.HERALD_REGION).toBe('us-east-1');
    expect(c.HERALD_REGIONS).toEqual(['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1']);
    expect(c.RATE_LIMIT_DEFAULT).toBe(10);
    expect(c.FREE_DAILY_LIMIT).toBe(100);
  });

  it('believes no proxy unless told which: API_TRUSTED_PROXIES', () => {
    expect(loadConfig({}).API_TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig({ API_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8' }).API_TRUSTED_PROXIES).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(() => loadConfig({ API_TRUSTED_PROXIES: 'true' })).toThrow(/API_TRUSTED_PROXIES/);
  });

  it('names the variable that is wrong', () => {
    expect(() => loadConfig({ API_PORT: 'eighty' })).toThrow(/API_PORT/);
    expect(() => loadConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL: must be a URL with protocol redis: or rediss: \(got "http:\/\/x"\)/);
  });

  it('requires the role region to be in the region list', () => {
    let error: unknown;
    try {
      loadConfig({ HERALD_REGION: 'eu-west-1', HERALD_REGIONS: 'us-east-1,sa-east-1' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(['HERALD_REGION: must be one of HERALD_REGIONS (got "eu-west-1")']);
  });

  it('parses the NATS servers of each region for herald all', () => {
    const c = loadConfig({ NATS_REGION_URLS: 'us-east-1=nats://127.0.0.1:14222|nats://127.0.0.1:14223, eu-west-1=nats://127.0.0.1:14232' });
    expect(c.NATS_REGION_URLS).toEqual({
      'us-east-1': ['nats://127.0.0.1:14222', 'nats://127.0.0.1:14223'],
      'eu-west-1': ['nats://127.0.0.1:14232'],
    });
    expect(() => loadConfig({ NATS_REGION_URLS: 'eu-west-1=http://x' })).toThrow(
      /NATS_REGION_URLS.eu-west-1.0: must be a URL with protocol nats: or tls:/,
    );
    expect(() => loadConfig({ NATS_REGION_URLS: 'us-east-1=nats://a', HERALD_REGIONS: 'eu-west-1', HERALD_REGION: 'eu-west-1' })).toThrow(
      /NATS_REGION_URLS: names a region that is not in HERALD_REGIONS/,
    );
  });

  it('refuses two regions whose email ids would look alike', () => {
    // aa-east-8 and ac-west-6 hash to the same 12-bit code (found by search; no real region name collides).
    expect(() => loadConfig({ HERALD_REGIONS: 'us-east-1,aa-east-8,ac-west-6' })).toThrow(
      /HERALD_REGIONS: holds two regions whose email ids would look alike/,
    );
    expect(loadConfig({ HERALD_REGIONS: 'us-east-1,aa-east-8' }).HERALD_REGIONS).toEqual(['us-east-1', 'aa-east-8']);
  });

  it('parses per-plan rate limits', () => {
    expect(loadConfig({ RATE_LIMIT_PLANS: 'free=5, scale-1m=200' }).RATE_LIMIT_PLANS).toEqual({ free: 5, 'scale-1m': 200 });
    expect(() => loadConfig({ RATE_LIMIT_PLANS: 'free=zero' })).toThrow(/RATE_LIMIT_PLANS: "free=zero" is not plan=positive-integer/);
  });
});
