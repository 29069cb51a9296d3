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

  describe("REGION_DATABASE_URLS: each region's email plane database", () => {
    const regions = { HERALD_REGIONS: 'us-east-1,eu-west-1' };
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig({ ...regions, ...env });
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };

    it('takes region=url pairs, comma-separated', () => {
      expect(loadConfig({ ...regions, REGION_DATABASE_URLS: ' eu-west-1=postgres://h@db.eu/herald?sslmode=require ' }).REGION_DATABASE_URLS).toEqual({
        'eu-west-1': 'postgres://h@db.eu/herald?sslmode=require',
      });
      expect(loadConfig({ ...regions }).REGION_DATABASE_URLS).toEqual({});
    });

    it('refuses a region outside HERALD_REGIONS, a value that is not one postgres URL, a region named twice, a pair without =', () => {
      expect(problems({ REGION_DATABASE_URLS: 'ap-south-1=postgres://h@db/herald' })).toEqual([
        'REGION_DATABASE_URLS: names a region that is not in HERALD_REGIONS (got "ap-south-1=postgres://h@db/herald")',
      ]);
      expect(problems({ REGION_DATABASE_URLS: 'eu-west-1=db.eu:5432/herald' })).toEqual([
        'REGION_DATABASE_URLS.eu-west-1: must be a URL with protocol postgres: or postgresql:',
      ]);
      expect(problems({ REGION_DATABASE_URLS: 'eu-west-1=redis://cache:6379' })).toEqual([
        'REGION_DATABASE_URLS.eu-west-1: must be a URL with protocol postgres: or postgresql:',
      ]);
      // Pairs are separated by commas: a semicolon made one URL of two, eu-west-1's, whose database was named `x;us-east-1=...`.
      expect(problems({ REGION_DATABASE_URLS: 'eu-west-1=postgres://h@a/x;us-east-1=postgres://h@b/y' })).toEqual([
        'REGION_DATABASE_URLS.eu-west-1: holds more than one URL: separate region=url pairs with commas',
      ]);
      // The last one used to win, silently.
      expect(problems({ REGION_DATABASE_URLS: 'eu-west-1=postgres://h@a/x,eu-west-1=postgres://h@b/y' })).toEqual([
        'REGION_DATABASE_URLS: names eu-west-1 twice (got "eu-west-1=postgres://h@a/x,eu-west-1=postgres://h@b/y")',
      ]);
      expect(problems({ REGION_DATABASE_URLS: 'postgres://h@db.eu/herald' })).toEqual([
        'REGION_DATABASE_URLS: "postgres://h@db.eu/herald" is not region=value (got "postgres://h@db.eu/herald")',
      ]);
    });

    it("with the control database apart, refuses a served region whose email plane would default to this region's own", () => {
      // us-east-1's deployment of deploy/README.md's two regions, HERALD_REGIONS left at the four.
      const usEast = {
        HERALD_REGION: 'us-east-1',
        DATABASE_URL: 'postgres://h@db.us-east-1/herald',
        CONTROL_DATABASE_URL: 'postgres://h@db.global/herald',
        REGION_DATABASE_URLS: 'eu-west-1=postgres://h@db.eu-west-1/herald',
      };
      expect(problems({ ...usEast, HERALD_REGIONS: 'us-east-1,eu-west-1,sa-east-1,ap-northeast-1' })).toEqual([
        'REGION_DATABASE_URLS: names no database for sa-east-1, ap-northeast-1 (served: HERALD_REGIONS). With CONTROL_DATABASE_URL apart, DATABASE_URL is us-east-1\'s own email plane, not theirs: name each other served region\'s database (region=url), or serve fewer regions (got "eu-west-1=postgres://h@db.eu-west-1/herald")',
      ]);
      expect(problems({ ...usEast, REGION_DATABASE_URLS: '' })[0]).toMatch(/^REGION_DATABASE_URLS: names no database for eu-west-1 /);
      // Each served region named: it boots.
      expect(loadConfig({ ...regions, ...usEast }).REGION_DATABASE_URLS).toEqual({ 'eu-west-1': 'postgres://h@db.eu-west-1/herald' });
      // The control plane in DATABASE_URL's database (one database, or the region that holds the control plane): a region not named uses it.
      expect(problems({ ...usEast, CONTROL_DATABASE_URL: usEast.DATABASE_URL, REGION_DATABASE_URLS: '' })).toEqual([]);
      expect(problems({ DATABASE_URL: usEast.DATABASE_URL, HERALD_REGIONS: 'us-east-1,eu-west-1,sa-east-1' })).toEqual([]);
    });

    it('never echoes a password, nor a secret', () => {
      expect(problems({ REGION_DATABASE_URLS: 'ap-south-1=postgres://herald:s3cr%2Ft@db/herald,eu-west-1=postgres://u:p@eu/h' })).toEqual([
        'REGION_DATABASE_URLS: names a region that is not in HERALD_REGIONS (got "ap-south-1=postgres://herald:***@db/herald,eu-west-1=postgres://u:***@eu/h")',
      ]);
      expect(problems({ DATABASE_URL: 'mysql://herald:hunter2@db/herald' })).toEqual([
        'DATABASE_URL: must be a URL with protocol postgres: or postgresql: (got "mysql://herald:***@db/herald")',
      ]);
      expect(problems({ REGION_DATABASE_URLS: 'postgres://herald:hunter2@db.eu/herald' })).toEqual([
        'REGION_DATABASE_URLS: "postgres://herald:***@db.eu/herald" is not region=value (got "postgres://herald:***@db.eu/herald")',
      ]);
      expect(problems({ AUTH_SECRET: 'too-short-but-secret' })).toEqual(['AUTH_SECRET: must be at least 32 characters']);
    });
  });

  it('refuses a region named twice in any region=value list', () => {
    expect(() => loadConfig({ NATS_REGION_URLS: 'us-east-1=nats://a,us-east-1=nats://b' })).toThrow(/NATS_REGION_URLS: names us-east-1 twice/);
  });

  it('parses per-plan rate limits', () => {
    expect(loadConfig({ RATE_LIMIT_PLANS: 'free=5, scale-1m=200' }).RATE_LIMIT_PLANS).toEqual({ free: 5, 'scale-1m': 200 });
    expect(() => loadConfig({ RATE_LIMIT_PLANS: 'free=zero' })).toThrow(/RATE_LIMIT_PLANS: "free=zero" is not plan=positive-integer/);
  });
});
