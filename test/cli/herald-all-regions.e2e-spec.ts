import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Client } from 'pg';
import { freeSharedPort, isolatedConfig, IsolatedConfig, MxSink, TestDnsServer } from '@herald/testing';
import { envOf } from '../support/herald-process';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');
const SINK_HOST = '127.0.0.40';

interface Boot {
  api_url: string;
  api_key: string;
  regions: string[];
  roles: Record<string, string>;
}

/**
 * `herald all` as `npm start` runs it (development bootstrap, a real child process), with
 * `--regions`: a worker and a webhooks consumer run for each region it serves, so a new user's
 * eu-west-1 domain is delivered (it used to stay `queued`: only the home region's worker ran),
 * and a region it does not serve is refused at POST /domains. Recipients' mail goes to a real MX
 * sink through a local DNS server.
 */
describe('herald all --regions: every served region is delivered, no other is accepted', () => {
  let isolated: IsolatedConfig;
  let dns: TestDnsServer;
  let sink: MxSink;
  let herald: ChildProcess | undefined;
  let db: Client;
  let output = '';
  let boot: Boot;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    dns = await TestDnsServer.start();
    const port = await freeSharedPort([SINK_HOST]);
    sink = await MxSink.start({ host: SINK_HOST, port });
    dns.set('inbox.test', 'MX', [{ exchange: 'mx.inbox.test', priority: 10 }]).set('mx.inbox.test', 'A', [SINK_HOST]);
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${isolated.config.DATABASE_SCHEMA}"`);
    herald = spawn(process.execPath, [BIN, 'all', '--regions', 'us-east-1,eu-west-1'], {
      env: envOf(isolated.config, {
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        DEV_BOOTSTRAP: 'true',
        HERALD_REGIONS: '',
        API_HOST: '127.0.0.1',
        API_PORT: '0',
        SMTP_HOST: '127.0.0.1',
        SMTP_PORTS: '0:tls,0:starttls',
        BOUNCE_MX_HOST: '127.0.0.1',
        BOUNCE_MX_PORT: '0',
        DNS_SERVERS: dns.address(),
        DELIVERY_PORT: String(port),
        DOMAIN_CACHE_MS: '0',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    herald.stdout!.on('data', (d) => (output += d));
    herald.stderr!.on('data', (d) => (output += d));
    await waitFor(
      () => output.includes('"api_key"'),
      () => `herald all to boot: ${output}`,
      60_000,
    );
    const summary = output.slice(output.indexOf('{\n'), output.indexOf('\n}\n') + 2);
    boot = JSON.parse(summary) as Boot;
  }, 90_000);

  afterAll(async () => {
    if (herald && herald.exitCode === null) {
      const exited = once(herald, 'exit');
      herald.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (herald.exitCode === null) herald.kill('SIGKILL');
    }
    await db?.end();
    await sink?.close();
    await dns?.close();
    await isolated?.cleanup();
  });

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${boot.api_url}${path}`, {
      method,
      headers: { authorization: `Bearer ${boot.api_key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it('runs a worker and a webhooks consumer for each region it serves', () => {
    expect(boot.regions).toEqual(['us-east-1', 'eu-west-1']);
    expect(Object.keys(boot.roles).sort()).toEqual([
      'api',
      'smtp',
      'webhooks eu-west-1',
      'webhooks us-east-1',
      'worker eu-west-1',
      'worker us-east-1',
    ]);
  });

  it("delivers an eu-west-1 domain's email to the recipient's MX", async () => {
    const created = await call('POST', '/domains', { name: 'eu.newcomer.test', region: 'eu-west-1' });
    expect({ status: created.status, region: created.body.region }).toEqual({ status: 200, region: 'eu-west-1' });
    // DNS verification has its own suites (test/domains): the domain is marked verified directly.
    await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [created.body.id]);
    const sent = await call('POST', '/emails', { from: 'hello@eu.newcomer.test', to: 'jane@inbox.test', subject: 'From Europe', text: 'hi' });
    expect(sent.status).toBe(200);
    await sink.waitForMessages(1, 20_000);
    expect(sink.messages[0].recipients).toEqual(['jane@inbox.test']);
    expect(sink.messages[0].raw.toString()).toContain('Subject: From Europe');
    await waitFor(
      async () => (await db.query(`SELECT last_event FROM emails WHERE id = $1`, [sent.body.id])).rows[0]?.last_event === 'delivered',
      'the email to be recorded as delivered',
    );
    const { rows } = await db.query(`SELECT region FROM emails WHERE id = $1`, [sent.body.id]);
    expect(rows).toEqual([{ region: 'eu-west-1' }]);
  });

  it('refuses a domain in a region it does not serve with a 422 that says so', async () => {
    const refused = await call('POST', '/domains', { name: 'sa.newcomer.test', region: 'sa-east-1' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ name: 'invalid_region' });
    expect(refused.body.message).toBe(
      'Invalid `region` field. No worker delivers mail for `sa-east-1` here. Region must be one of `us-east-1` | `eu-west-1`.',
    );
  });
});

async function waitFor(check: () => Promise<boolean> | boolean, what: string | (() => string), timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
