import { Client } from 'pg';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { ApiProcess, crashAfterCommit, envOf, herald, startApiProcess } from '../support/herald-process';
import { NatsProbe } from '../support/nats-probe';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * kill -9 of the API between the Postgres commit and the JetStream publish: the email is on
 * record but was never dispatched. The reconciler of a surviving API publishes it, once.
 */
describe('a crash between commit and publish', () => {
  let isolated: IsolatedConfig;
  let probe: NatsProbe;
  let db: Client;
  const survivors: ApiProcess[] = [];

  beforeAll(async () => {
    isolated = await isolatedConfig();
    probe = await NatsProbe.open(isolated.config);
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO ${isolated.config.DATABASE_SCHEMA}`);
  });

  afterAll(async () => {
    await Promise.all(survivors.map((s) => s.stop()));
    await probe?.close();
    await db?.end();
    await isolated?.cleanup();
  });

  it('is dispatched by the reconciler exactly once', async () => {
    const env = envOf(isolated.config, { DISPATCH_GRACE_SECONDS: '1', RECONCILE_INTERVAL_MS: '200' });
    const team = await herald(env, 'team', 'create', '--name', 'crash', '--plan', 'pro-50k', '--rate-limit', '1000');
    const { token } = await herald(env, 'key', 'create', '--team', team.id);

    const doomed = await startApiProcess(crashAfterCommit({ ...env, RECONCILE_INTERVAL_MS: '600000' }));
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // The team's sending domain, added through the API and marked verified directly (DNS
    // verification has its own suites, in test/domains).
    const domain = await fetch(`${doomed.url}/domains`, { method: 'POST', headers, body: JSON.stringify({ name: 'crash.acme.test' }) });
    expect(domain.status).toBe(200);
    const { id: domainId } = (await domain.json()) as { id: string };
    await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [domainId]);

    const request = fetch(`${doomed.url}/emails`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ from: 'hello@crash.acme.test', to: 'jane@example.com', subject: 'Survives', html: '<p>hi</p>' }),
    });
    await expect(request).rejects.toThrow();
    expect((await doomed.exited)[1]).toBe('SIGKILL');

    // Committed with its outbox row, which only a confirmed publish removes.
    const { rows } = await db.query(
      `SELECT e.id, d.id IS NOT NULL AS in_outbox FROM emails e LEFT JOIN email_dispatches d ON e.id = ANY(d.email_ids) WHERE e.team_id = $1`,
      [team.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].in_outbox).toBe(true);
    const id: string = rows[0].id;
    expect(await probe.sendCommands('us-east-1')).not.toContain(id);

    // Two survivors reconcile side by side; row locks and Nats-Msg-Id keep it to one publish.
    survivors.push(...(await Promise.all([startApiProcess(env), startApiProcess(env)])));
    await waitFor('the reconciler to publish', async () => ((await probe.sendCommands('us-east-1')).includes(id) ? true : undefined));
    await waitFor('the dispatch to be recorded', async () => {
      const r = await db.query(`SELECT 1 FROM email_dispatches WHERE $1 = ANY(email_ids)`, [id]);
      return r.rows.length === 0 ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await probe.sendCommands('us-east-1')).filter((x) => x === id)).toHaveLength(1);
  });
});
