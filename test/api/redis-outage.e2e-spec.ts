import { Client } from 'pg';
import { isolatedConfig, IsolatedConfig, PrivateRedis, startPrivateRedis } from '@herald/testing';
import { ApiProcess, envOf, herald, startApiProcess } from '../support/herald-process';

/**
 * Redis frozen (SIGSTOP), then killed and started again empty, under a steady load of keyed
 * and unkeyed POST /emails to a real `herald api` process pointed at a Redis of this suite's
 * own. Herald's promise: no 500; a keyed request is answered once or refused with 503 and
 * Retry-After; after Redis comes back without its data, every key still means one email; and
 * answers during the outage come within the latency budget instead of hanging.
 */

type Kind = 'new key' | 'repeated key' | 'no key';

interface Answer {
  kind: Kind;
  key: string | null;
  status: number;
  id?: string;
  retryAfter: string | null;
  startedAt: number;
  endedAt: number;
}

const WORKERS = 8;
const DOMAIN = 'outage.acme.test';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Runs `task` over `items` with at most WORKERS at once, as a client pool would (thousands at once would be shed at API_MAX_IN_FLIGHT). */
async function pooled<T, R>(items: T[], task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]);
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, run));
  return results;
}
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

describe('Redis down under load', () => {
  let isolated: IsolatedConfig;
  let redis: PrivateRedis;
  let api: ApiProcess;
  let db: Client;
  let team: { id: string; token: string };

  beforeAll(async () => {
    isolated = await isolatedConfig();
    redis = await startPrivateRedis();
    // Only the API process uses the private Redis; the suite's cleanup purges its prefix on the shared one.
    const env = envOf(isolated.config, { REDIS_URL: redis.url });
    const created = await herald(env, 'team', 'create', '--name', 'outage', '--plan', 'scale-1m', '--rate-limit', '100000');
    team = { id: created.id, token: (await herald(env, 'key', 'create', '--team', created.id)).token };
    api = await startApiProcess(env);
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO ${isolated.config.DATABASE_SCHEMA}`);
    const domain = await fetch(`${api.url}/domains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: DOMAIN }),
    });
    expect(domain.status).toBe(200);
    await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [((await domain.json()) as { id: string }).id]);
  });

  afterAll(async () => {
    await api?.stop();
    await redis?.stop();
    await db?.end();
    await isolated?.cleanup();
  });

  const bodies = new Map<string, string>();
  const bodyOf = (n: number) => JSON.stringify({ from: `hello@${DOMAIN}`, to: `r${n}@example.com`, subject: `outage ${n}`, text: 'hi' });

  /** One POST /emails; a request that gets no answer within 15 s counts as status 0. */
  async function send(kind: Kind, key: string | null, body: string): Promise<Answer> {
    const startedAt = performance.now();
    const headers: Record<string, string> = { authorization: `Bearer ${team.token}`, 'content-type': 'application/json' };
    if (key) headers['idempotency-key'] = key;
    try {
      const response = await fetch(`${api.url}/emails`, { method: 'POST', headers, body, signal: AbortSignal.timeout(15_000) });
      const json = (await response.json()) as { id?: string };
      return {
        kind,
        key,
        status: response.status,
        id: json.id,
        retryAfter: response.headers.get('retry-after'),
        startedAt,
        endedAt: performance.now(),
      };
    } catch {
      return { kind, key, status: 0, retryAfter: null, startedAt, endedAt: performance.now() };
    }
  }

  it('answers every request within bounds, never 500, and keeps one email per idempotency key', async () => {
    const answers: Answer[] = [];
    const answered = new Map<string, string>(); // key → the email id it was first answered with
    const last = new Map<string, Answer>(); // key → its latest answer
    const repeatable: string[] = []; // keys answered 200, each repeated at most once during the load
    const record = (answer: Answer) => {
      answers.push(answer);
      if (!answer.key) return;
      last.set(answer.key, answer);
      if (answer.status === 200 && !answered.has(answer.key)) {
        answered.set(answer.key, answer.id!);
        repeatable.push(answer.key);
      }
    };
    let n = 0;
    let running = true;

    // Steady load: of every five requests, two carry a new key, one repeats an answered key, two have none.
    const worker = async () => {
      while (running) {
        const i = n++;
        if (i % 5 < 2) {
          const key = `key-${i}`;
          bodies.set(key, bodyOf(i));
          record(await send('new key', key, bodies.get(key)!));
        } else if (i % 5 === 2 && repeatable.length > 0) {
          const key = repeatable.shift()!;
          record(await send('repeated key', key, bodies.get(key)!));
        } else {
          record(await send('no key', null, bodyOf(i)));
        }
      }
    };
    const load = Array.from({ length: WORKERS }, worker);

    await sleep(2000);
    const outageStart = performance.now();
    redis.pause(); // frozen: connections stay open, nothing answers
    await sleep(1000);
    // Every Redis use has a fallback, so the API stays in the load balancer, reporting Redis degraded.
    const readiness = await fetch(`${api.url}/health/ready`);
    const readinessBody = await readiness.json();
    await sleep(1500);
    await redis.kill(); // ...then gone, with everything it held
    await sleep(500);
    await redis.restart(); // back, empty
    const outageEnd = performance.now();
    await sleep(2500);
    running = false;
    await Promise.all(load);

    // Every key not answered yet (503'd) is retried after its Retry-After until it is answered.
    for (let round = 0; round < 20; round++) {
      const pending = [...bodies.keys()].filter((key) => !answered.has(key));
      if (pending.length === 0) break;
      await sleep(1000 * Math.max(...pending.map((key) => Number(last.get(key)?.retryAfter) || 1)));
      const retried = await pooled(pending, (key) => send(last.get(key)!.kind, key, bodies.get(key)!));
      retried.forEach(record);
    }
    // And every key once more: each is a replay of its first answer, from Postgres since Redis lost it.
    const replays = await pooled([...bodies.keys()], (key) => send('repeated key', key, bodies.get(key)!));
    replays.forEach(record);

    expect({ status: readiness.status, body: readinessBody }).toEqual({
      status: 200,
      body: { status: 'degraded', checks: { postgres: 'up', redis: 'degraded', nats: 'up' } },
    });

    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[`${a.kind} ${a.status}`] = (statuses[`${a.kind} ${a.status}`] ?? 0) + 1;
    const during = answers.filter((a) => a.endedAt >= outageStart && a.startedAt <= outageEnd);
    const latencies = during.map((a) => a.endedAt - a.startedAt).sort((x, y) => x - y);
    const p99 = percentile(latencies, 99);
    const before = answers
      .filter((a) => a.endedAt < outageStart)
      .map((a) => a.endedAt - a.startedAt)
      .sort((x, y) => x - y);
    console.log(
      `redis outage of ${Math.round(outageEnd - outageStart)} ms under load: ${answers.length} answers ${JSON.stringify(statuses)}; ` +
        `${during.length} answered during the outage: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
        `max ${latencies[latencies.length - 1].toFixed(1)} ms; ${before.length} before it: p50 ${percentile(before, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(before, 99).toFixed(1)} ms`,
    );

    // No 500, no hang, nothing but an answer or a retryable refusal.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(answers.filter((a) => a.status === 503 && !/^[1-9]\d*$/.test(a.retryAfter ?? ''))).toEqual([]);
    expect(p99).toBeLessThan(1000);
    // The outage was real: keyed requests were refused during it, and mail without a key kept flowing.
    expect(during.some((a) => a.key && a.status === 503)).toBe(true);
    expect(during.some((a) => !a.key && a.status === 200 && a.startedAt > outageStart + 500)).toBe(true);

    // Answered once: every key ends up answered, always with the same id.
    expect(replays.filter((a) => a.status !== 200)).toEqual([]);
    for (const a of answers.filter((x) => x.key && x.status === 200))
      expect({ key: a.key, id: a.id }).toEqual({ key: a.key, id: answered.get(a.key!) });

    // From Postgres: one email per key (the one answered), and one per unkeyed 200.
    const { rows } = await db.query<{ key: string; ids: string[] }>(
      `SELECT idempotency_key AS key, array_agg(id::text) AS ids FROM emails WHERE team_id = $1 AND idempotency_key IS NOT NULL GROUP BY 1`,
      [team.id],
    );
    expect(Object.fromEntries(rows.map((r) => [r.key, r.ids]))).toEqual(Object.fromEntries([...answered].map(([key, id]) => [key, [id]])));
    expect(answered.size).toBe(bodies.size);
    const unkeyed = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM emails WHERE team_id = $1 AND idempotency_key IS NULL`, [team.id]);
    expect(unkeyed.rows[0].n).toBe(answers.filter((a) => !a.key && a.status === 200).length);
  });
});
