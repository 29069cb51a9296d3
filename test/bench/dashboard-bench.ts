// The dashboard API at a million emails (issue 13's benchmark): fills one team with
// `--emails` emails (default 1,000,000) and their recipients in a few generate_series
// statements, then times GET requests of the Emails page through the api role, signed in with
// a session cookie: the first page, filtered pages (last_event; the API key that sent half the
// emails, and one that sent 1%; the sending domain), a search by recipient, a search by subject word and an email's
// detail. Prints p50/p99 of each; the target is p99 under
// 100 ms. `npm run build && node dist/test/bench/dashboard-bench.js [--emails N] [--requests N]`.
import './aliases';
import { Client } from 'pg';
import { loadConfig } from '@herald/config';
import { runMigrations } from '@herald/database';
import { startApi } from '../../apps/api/src/api.app';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

const EMAILS = option('emails', 1_000_000);
const REQUESTS = option('requests', 200);

async function main(): Promise<void> {
  const suffix = `${process.pid}`;
  const config = loadConfig(process.env, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_SCHEMA: `bench_dash_${suffix}`,
    REDIS_PREFIX: `bench:dash:${suffix}:`,
    NATS_NAMESPACE: `bench_dash_${suffix}`,
    API_PORT: '0',
    OPS_PORT: '0',
    RECONCILE_INTERVAL_MS: '600000',
  });
  await runMigrations(config);
  const db = new Client({ connectionString: config.DATABASE_URL });
  await db.connect();
  await db.query(`SET search_path TO "${config.DATABASE_SCHEMA}"`);
  const api = await startApi(config);
  try {
    const session = await signIn(api.url, db);
    const teamId = (await get(api.url, session, '/dashboard/api/me')).body.teams[0].id as string;
    const filled = Date.now();
    const keys = { half: crypto.randomUUID(), rare: crypto.randomUUID(), other: crypto.randomUUID() };
    await fill(db, teamId, EMAILS, keys);
    console.log(`filled ${EMAILS.toLocaleString('en')} emails in ${((Date.now() - filled) / 1000).toFixed(1)} s`);
    const { rows } = await db.query(`SELECT id FROM emails WHERE team_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`, [
      teamId,
      Math.floor(EMAILS / 2),
    ]);
    const middle = rows[0].id as string;
    const domainId = await addDomain(api.url, session, teamId, 'bench.test');
    const base = `/dashboard/api/teams/${teamId}/emails`;
    const scenarios: [string, (i: number) => string][] = [
      ['first page (50)', () => `${base}?limit=50`],
      ['filtered: last_event=bounced', () => `${base}?limit=50&last_event=bounced`],
      ['filtered: api key (50%)', () => `${base}?limit=50&api_key_id=${keys.half}`],
      ['filtered: api key (1%)', () => `${base}?limit=50&api_key_id=${keys.rare}`],
      ['filtered: sending domain', () => `${base}?limit=50&domain_id=${domainId}`],
      ['search by recipient', (i) => `${base}?q=user${(i * 7919) % EMAILS}@example.com`],
      ['search by subject word', () => `${base}?limit=50&q=invoice`],
      ['email detail', () => `${base}/${middle}`],
    ];
    console.log(`\n${REQUESTS} sequential requests each (machine shared with other work)\n`);
    console.log('scenario                          p50 ms   p99 ms   max ms');
    for (const [name, path] of scenarios) {
      for (let i = 0; i < 10; i++) await get(api.url, session, path(i)); // warm-up
      const times: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const started = performance.now();
        const response = await get(api.url, session, path(i + 10));
        times.push(performance.now() - started);
        if (response.status !== 200) throw new Error(`${name}: ${response.status} ${JSON.stringify(response.body)}`);
      }
      times.sort((a, b) => a - b);
      const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
      console.log(`${name.padEnd(32)} ${at(0.5).padStart(7)}  ${at(0.99).padStart(7)}  ${times[times.length - 1]!.toFixed(1).padStart(7)}`);
    }
  } finally {
    await api.close();
    await db.query(`DROP SCHEMA "${config.DATABASE_SCHEMA}" CASCADE`);
    await db.end();
  }
}

/** One user, signed up, verified by hand (no mail in a bench), signed in: the session cookies. */
async function signIn(url: string, db: Client): Promise<string> {
  const csrf = await fetch(`${url}/dashboard/api/csrf`);
  const token = ((await csrf.json()) as { token: string }).token;
  const headers = { 'content-type': 'application/json', origin: url, 'x-csrf-token': token, cookie: `herald_csrf=${token}` };
  const account = { email: 'bench@bench.test', password: 'bench password 1', name: 'Bench' };
  const signUp = await fetch(`${url}/dashboard/api/auth/sign-up/email`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...account, team_name: 'Bench' }),
  });
  if (!signUp.ok) throw new Error(`sign-up: ${signUp.status} ${await signUp.text()}`);
  await db.query(`UPDATE users SET email_verified = true WHERE email = $1`, [account.email]);
  const response = await fetch(`${url}/dashboard/api/auth/sign-in/email`, { method: 'POST', headers, body: JSON.stringify(account) });
  if (!response.ok) throw new Error(`sign-in: ${response.status} ${await response.text()}`);
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** The team's sending domain of the seeded emails' From (unverified: the filter only needs its name). */
async function addDomain(url: string, session: string, teamId: string, name: string): Promise<string> {
  const token = ((await (await fetch(`${url}/dashboard/api/csrf`)).json()) as { token: string }).token;
  const response = await fetch(`${url}/dashboard/api/teams/${teamId}/domains`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url, 'x-csrf-token': token, cookie: `${session}; herald_csrf=${token}` },
    body: JSON.stringify({ name }),
  });
  if (!response.ok) throw new Error(`add domain: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

async function get(url: string, cookie: string, path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}${path}`, { headers: { cookie } });
  return { status: response.status, body: await response.json() };
}

/**
 * A team's history: one email a second going back in time, five outcomes in turn, subjects of
 * three kinds, one recipient each, sent with three API keys (half, 1% and the rest). Inserted in
 * chunks of 100,000 so no statement runs for long.
 */
async function fill(db: Client, teamId: string, count: number, keys: { half: string; rare: string; other: string }): Promise<void> {
  const chunk = 100_000;
  for (let start = 0; start < count; start += chunk) {
    const end = Math.min(count, start + chunk) - 1;
    await db.query(
      `WITH rows AS (
         SELECT gen_random_uuid() AS id, i FROM generate_series($2::int, $3::int) AS i
       ), emails_in AS (
         INSERT INTO emails (id, team_id, region, source, from_address, to_addresses, subject, message_id, last_event, api_key_id, created_at)
         SELECT id, $1, 'us-east-1', 'api', 'Shop <shop@bench.test>', ARRAY['user' || i || '@example.com'],
                (ARRAY['Order ', 'Invoice ', 'Welcome '])[i % 3 + 1] || i, '<' || id || '@bench.test>',
                (ARRAY['delivered', 'delivered', 'delivered', 'sent', 'bounced'])[i % 5 + 1],
                CASE WHEN i % 100 = 7 THEN $5::uuid WHEN i % 2 = 0 THEN $4::uuid ELSE $6::uuid END, now() - make_interval(secs => i)
           FROM rows
       )
       INSERT INTO email_recipients (email_id, position, kind, address, status)
       SELECT id, 0, 'to', 'user' || i || '@example.com', (ARRAY['delivered', 'delivered', 'delivered', 'sending', 'bounced'])[i % 5 + 1] FROM rows`,
      [teamId, start, end, keys.half, keys.rare, keys.other],
    );
  }
  // As autovacuum would soon after such a load: statistics, the visibility map (index-only scans), and the dirty pages written out,
  // so the timings are of the queries, not of the fill's aftermath.
  await db.query('VACUUM ANALYZE emails');
  await db.query('VACUUM ANALYZE email_recipients');
  await db.query('CHECKPOINT').catch(() => undefined);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
