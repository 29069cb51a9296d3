import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { attempt, byStatus, closedLoop, openLoop, quantile, type Attempt } from '../support/burst-load';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { emailsByKey } from '../support/fault-load';
import { FaultWorld, type FaultTeam } from '../support/fault-world';

jest.setTimeout(150_000);

/** The API's Postgres pool and its in-flight limit: twice the pool may wait for a connection, no more. */
const POOL = 4;
const MAX_IN_FLIGHT = 2 * POOL;
/** Each chunk to and from the API's Postgres is held this long: the bottleneck is the database, not the shared CPU. */
const PG_LATENCY_MS = 15;
const BASELINE_MS = 4_000;
const BURST_MS = 5_000;
const SPIKE = 10;
/** Refused keys sent again after their Retry-After: a refusal stored nothing, so the retry is one email. */
const RETRIED = 20;

const to = (phase: string) => (n: number) => `${phase}${n}@inbox.burst.test`;

/**
 * Scenario 18, burst and back-pressure: the rate a child `herald api` sustains is measured first
 * (closed loop, as many clients as its Postgres pool), then ten times that rate arrives in an open
 * loop for 5 s. Pass: the API refuses the excess at once with `503 service_unavailable` and
 * `Retry-After` (429 would be a team's own rate limit, here out of the way); the requests it admits
 * keep the latency its in-flight limit promises (API_MAX_IN_FLIGHT / the sustained rate, Little's
 * law: the budget) within a 2× margin, widened by the baseline's own p99/p50 spread, plus the API's own delay under the burst (the refusals' p99:
 * on a loaded machine the event loop's wait is paid by every request), and so does the p99 of every
 * answer; the admitted p99 stays under a tenth of the wait the refused would have caused unshed; no request goes
 * unanswered; each 200 is one email, delivered once; nothing is stored for a refused key, whose
 * retry after its Retry-After is accepted and delivered.
 */
describe('fault 18: a 10× burst is shed with 503 and Retry-After before the p99 passes its budget', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('sheds the excess, keeps the admitted fast and delivers exactly the accepted', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.burst.test');
    const started = await Promise.allSettled([
      world.team('burst'),
      world.api({ DATABASE_POOL_SIZE: String(POOL), API_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) }),
      world.worker(),
    ] as const);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const team = (started[0] as PromiseFulfilledResult<FaultTeam>).value;
    world.proxies['api.postgres'].latency(PG_LATENCY_MS);

    const baseline = await closedLoop(world, team, to('base'), POOL, BASELINE_MS);
    const rate = (baseline.filter((a) => a.status === 200).length * 1000) / BASELINE_MS;
    const baseP99 = quantile(
      baseline.map((a) => a.latencyMs),
      0.99,
    );
    const budgetMs = (MAX_IN_FLIGHT / rate) * 1000;
    console.log(
      `baseline: ${baseline.length} sends by ${POOL} clients in ${BASELINE_MS} ms, ${rate.toFixed(1)}/s, ` +
        `p50 ${quantile(
          baseline.map((a) => a.latencyMs),
          0.5,
        ).toFixed(0)} ms, p99 ${baseP99.toFixed(0)} ms, ${JSON.stringify(byStatus(baseline))}; ` +
        `budget ${MAX_IN_FLIGHT} in flight / ${rate.toFixed(1)}/s = ${budgetMs.toFixed(0)} ms`,
    );
    expect(byStatus(baseline)).toEqual({ '200': baseline.length });

    const burst = await openLoop(world, team, to('burst'), SPIKE * rate, BURST_MS);
    const admitted = burst.filter((a) => a.status === 200);
    const refused = burst.filter((a) => a.status !== 200);
    const p99 = (of: Attempt[]) =>
      quantile(
        of.map((a) => a.latencyMs),
        0.99,
      );
    console.log(
      `burst: ${burst.length} sends at ${(SPIKE * rate).toFixed(0)}/s for ${BURST_MS} ms: ${JSON.stringify(byStatus(burst))}; ` +
        `admitted ${((admitted.length * 1000) / BURST_MS).toFixed(1)}/s, p50 ${quantile(
          admitted.map((a) => a.latencyMs),
          0.5,
        ).toFixed(0)} ms, ` +
        `p99 ${p99(admitted).toFixed(0)} ms; refusals p99 ${p99(refused).toFixed(0)} ms; every answer p99 ${p99(burst).toFixed(0)} ms ` +
        `(budget ${budgetMs.toFixed(0)} ms). Unshed, the ${refused.length} refused would have queued: the last would have waited ~${(refused.length / rate).toFixed(1)} s`,
    );
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect({ status: a.status, name: a.name }).toEqual({ status: 503, name: 'service_unavailable' });
      expect(a.retryAfter).toBe('1');
    }
    // A refusal touches no database: its latency is the API's own delay under the burst (its event loop and
    // the shared CPU), which every admitted request pays too and no admission limit can remove. The budget is
    // a mean wait; a p99 exceeds its mean by the spread of the service time itself, which the baseline measured
    // on this machine in this run (its p99 over its p50: a CI run once read 1,321 ms against a bound of 1,313 ms
    // that left the spread out). The bound is the budget's 2× margin times that spread, plus the API's own
    // delay; unshed, the admitted would instead have waited behind every refused (the last assertion below).
    const ownDelayMs = p99(refused);
    const spread = Math.max(
      1,
      baseP99 /
        quantile(
          baseline.map((a) => a.latencyMs),
          0.5,
        ),
    );
    const boundMs = 2 * budgetMs * spread + ownDelayMs;
    console.log(
      `bound: 2 × ${budgetMs.toFixed(0)} ms × the baseline's p99/p50 ${spread.toFixed(2)} + the API's own delay (refusals' p99) ${ownDelayMs.toFixed(0)} ms = ${boundMs.toFixed(0)} ms`,
    );
    expect(p99(admitted)).toBeLessThan(boundMs);
    expect(p99(burst)).toBeLessThan(boundMs);
    expect(p99(admitted)).toBeLessThan(((refused.length / rate) * 1000) / 10);

    // Nothing refused was stored: a refused key's retry after Retry-After makes its one email.
    await new Promise((r) => setTimeout(r, Number(refused[0].retryAfter) * 1000));
    const retried: Attempt[] = [];
    let again = 0;
    for (const a of refused.slice(0, RETRIED)) {
      // As a careful client does: the same key after each Retry-After, until 200 (a busy API may refuse a retry too).
      let reply = await attempt(world, team, a.key, a.to);
      for (; reply.status === 503 && again < 3 * RETRIED; again++) {
        await new Promise((r) => setTimeout(r, Number(reply.retryAfter ?? 1) * 1000));
        reply = await attempt(world, team, a.key, a.to);
      }
      retried.push(reply);
    }
    console.log(`${retried.length} refused keys sent again: ${JSON.stringify(byStatus(retried))}, ${again} of them refused once more first`);
    expect(byStatus(retried)).toEqual({ '200': retried.length });

    const answered = [...baseline, ...admitted, ...retried];
    const stored = await emailsByKey(world, team.id);
    const wrong = answered.filter((a) => stored.get(a.key)?.ids.join() !== a.id);
    expect(wrong).toEqual([]);
    expect(stored.size).toBe(answered.length);
    const accepted = new Map(answered.map((a) => [a.id!, [a.to]]));
    // No webhooks role here: webhook delivery under faults is the other scenarios' business.
    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink] }, 60_000);
    printLedger(`18 a ${SPIKE}× burst (${burst.length} sends, ${refused.length} shed), ${retried.length} shed keys retried`, ledger, 0);
    expectLedger(ledger, 0);
    expect(ledger.delivered).toBe(answered.length);
  });
});
