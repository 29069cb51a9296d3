import { DataSource } from 'typeorm';
import { loadConfig } from '@herald/config';
import { newRegionalId } from '@herald/core';
import { eventually, freeLoopbackPort, TcpProxy } from '@herald/testing';
import { dataSourceOptions } from './data-source';
import { EmailPlaneUnreachableError, EmailPlanes } from './email-planes';
import { isPostgresUnreachable } from './postgres-unavailable';

/** EmailPlanes on the machine's Postgres: its `herald` database, and its `postgres` database standing in for another region's. */
describe('EmailPlanes', () => {
  const base = loadConfig(process.env);
  const other = new URL(base.DATABASE_URL);
  other.pathname = '/postgres';
  let control: DataSource;
  const opened: EmailPlanes[] = [];

  const planes = async (overrides: Record<string, string>) => {
    const config = loadConfig(process.env, { HERALD_REGIONS: 'us-east-1,eu-west-1,ap-south-1', ...overrides });
    const made = new EmailPlanes(config, control);
    await made.onModuleInit();
    opened.push(made);
    return made;
  };

  beforeAll(async () => {
    control = await new DataSource(dataSourceOptions(base)).initialize();
  });
  afterAll(async () => {
    for (const p of opened) await p.onApplicationShutdown();
    await control.destroy();
  });

  it('gives every region the control DataSource itself when one database holds everything', async () => {
    const p = await planes({});
    expect(p.home).toBe(control);
    expect(await p.of('eu-west-1')).toBe(control);
    expect(p.all().map((a) => a.regions)).toEqual([['us-east-1', 'eu-west-1', 'ap-south-1']]);
  });

  it("opens one DataSource per other database, shared by the regions it holds, and finds an id's region", async () => {
    const p = await planes({ REGION_DATABASE_URLS: `eu-west-1=${other.href},ap-south-1=${other.href}` });
    const eu = await p.of('eu-west-1');
    expect(eu).not.toBe(control);
    expect(await p.of('ap-south-1')).toBe(eu);
    expect((await eu.query('SELECT current_database() AS db'))[0].db).toBe('postgres');
    expect(await p.ofId(newRegionalId('eu-west-1'))).toBe(eu);
    expect(await p.ofId(newRegionalId('us-east-1'))).toBe(control);
    const ids = [newRegionalId('eu-west-1'), newRegionalId('us-east-1'), newRegionalId('ap-south-1')];
    expect((await p.byId(ids)).map((g) => [g.db === eu ? 'other' : 'control', g.ids])).toEqual([
      ['other', [ids[0], ids[2]]],
      ['control', [ids[1]]],
    ]);
    expect(p.all().map((a) => a.regions)).toEqual([['us-east-1'], ['eu-west-1', 'ap-south-1']]);
  });

  it("boots without another region's database, and tries it again at each use", async () => {
    const down = `postgres://postgres@127.0.0.1:${await freeLoopbackPort()}/herald`;
    const p = await planes({ REGION_DATABASE_URLS: `eu-west-1=${down}` });
    expect(p.home).toBe(control);
    await expect(p.of('eu-west-1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Refused at once until a probe reaches it, then tried again at the next use.
    await expect(p.of('eu-west-1')).rejects.toMatchObject({ code: 'service_unavailable', cause: { code: 'ECONNREFUSED' } });
    expect(() => p.of('sa-east-1')).toThrow('region sa-east-1 is not served here');
  });

  it("refuses a partitioned region's database at once after its first failed connection, and serves it again when a probe reaches it", async () => {
    const proxy = await TcpProxy.start({ host: other.hostname, port: Number(other.port || 5432) });
    try {
      const p = await planes({ REGION_DATABASE_URLS: `eu-west-1=${proxy.rewrite(other.href)}` });
      const eu = await p.of('eu-west-1');
      expect(await eu.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);

      // A partition: packets dropped, not refused. The pool's connections are gone; a new one waits for its connect timeout.
      proxy.set('blackhole');
      proxy.reset();
      // (The pool drops its reset connections as their errors arrive.)
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(isPostgresUnreachable(await eu.query('SELECT 1').catch((e: unknown) => e))).toBe(true);
      // From then on, at once: a 503 naming the region, for a statement and for the plane itself.
      const started = performance.now();
      const refused = await eu.query('SELECT 1').catch((e: unknown) => e);
      await expect(p.of('eu-west-1')).rejects.toBeInstanceOf(EmailPlaneUnreachableError);
      expect(performance.now() - started).toBeLessThan(500);
      expect(refused).toBeInstanceOf(EmailPlaneUnreachableError);
      expect(refused).toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 1, regions: ['eu-west-1'] });
      expect((refused as Error).message).toMatch(/^The database of region eu-west-1 cannot be reached right now/);
      expect(isPostgresUnreachable(refused)).toBe(true);
      // The home region's plane is not touched.
      expect(await p.home.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);

      proxy.heal();
      await eventually(async () => expect(await eu.query('SELECT 1 AS one')).toEqual([{ one: 1 }]), 5_000);
      expect(await p.of('eu-west-1')).toBe(eu);
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
