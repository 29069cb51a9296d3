import { WebhookDispatcher } from '@herald/webhooks';
import type { TestTeam } from '../support/api-harness';
import { type Answer, type WebhookReceiver } from './webhook-receiver';
import { waitFor, WebhooksWorld } from './webhooks-world';

const FLOOR = 4;
/** The process's slots: one webhook alone may hold half (48), two a third each (32). */
const GLOBAL = 96;
const ATTEMPT_TIMEOUT_MS = 2_000;

/**
 * Adaptive per-endpoint concurrency, end to end: the webhooks role (in this process, real
 * Postgres, a local receiver that answers many requests at once) works through a backlog of
 * webhook messages written straight into `webhook_messages`. The receiver counts the requests
 * open at once to each path, which is what the assertions read.
 */
describe('webhooks: per-endpoint concurrency adapts', () => {
  let world: WebhooksWorld;
  let receiver: WebhookReceiver;
  let dispatcher: WebhookDispatcher;

  beforeAll(async () => {
    world = await WebhooksWorld.start({
      globalConcurrency: GLOBAL,
      perWebhookConcurrency: FLOOR,
      maxPerWebhookConcurrency: 64,
      attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
      // Enough attempts that the overload phases cannot exhaust a message's schedule.
      retryScheduleMs: [0, ...Array<number>(29).fill(200)],
    });
    receiver = world.receiver;
    dispatcher = world.webhooks.get(WebhookDispatcher);
  });
  afterAll(() => world?.close());
  afterEach(() => world.checkSignatures());

  /** A second webhook of the team on a path of its own. */
  const anotherWebhook = async (team: TestTeam): Promise<{ path: string; id: string }> => {
    const path = `/hook-${world.nextPath()}`;
    const created = await team.resend.webhooks.create({ endpoint: receiver.url(path), events: ['domain.created'] });
    expect(created.error).toBeNull();
    world.secrets.set(path, [created.data!.signing_secret]);
    return { path, id: created.data!.id };
  };

  /** `count` due messages for each webhook, one event each, interleaved oldest first (as a fan-out makes them). */
  const backlog = async (webhookIds: string[], count: number, tag: string): Promise<void> => {
    await world.db.query(
      `INSERT INTO webhook_messages (id, webhook_id, team_id, event_id, event_type, payload, next_attempt_at)
       SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id, w.team_id, $3 || '-' || i, 'domain.created',
              jsonb_build_object('type', 'domain.created', 'created_at', now(), 'data', jsonb_build_object('name', $3 || '-' || i)),
              now() - ($2::int - i) * interval '1 millisecond'
         FROM generate_series(1, $2::int) AS i, webhooks w WHERE w.id = ANY($1::uuid[])`,
      [webhookIds, count, tag],
    );
  };

  /** Messages received 2xx, by distinct webhook-id: at-least-once means each is there, once or more. */
  const taken = (path: string): Set<string> =>
    new Set(
      receiver
        .at(path)
        .filter((d) => typeof d.answered === 'number' && d.answered < 300)
        .map((d) => String(d.headers['webhook-id'])),
    );
  const statuses = async (webhookId: string): Promise<Record<string, number>> => {
    const rows: { status: string; n: number }[] = await world.db.query(
      `SELECT status, count(*)::int AS n FROM webhook_messages WHERE webhook_id = $1 GROUP BY status`,
      [webhookId],
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  const answering = (path: string, answer: Answer) => receiver.answer(path, () => answer);

  it('raises the requests in flight to an endpoint that keeps up, draining a backlog well beyond what 4 at a time could', async () => {
    const { id, path } = await world.teamWithWebhook();
    answering(path, { status: 200, afterMs: 50 });
    const count = 1_500;
    await backlog([id], count, 'drain');
    await waitFor(() => taken(path).size === count, 'the backlog delivered', 120_000);
    await waitFor(async () => (await statuses(id)).success === count, 'every message recorded a success', 30_000);
    // At 50 ms an answer, 4 in flight deliver at most 80 a second; the mean in flight is the speed-up.
    const mean = receiver.meanOpen(path);
    console.log(
      `one endpoint, 50 ms answers: ${count} messages, at most ${receiver.maxOpen(path)} and on average ${mean.toFixed(1)} requests in flight (4 at a fixed limit)`,
    );
    expect(receiver.maxOpen(path)).toBeGreaterThanOrEqual(4 * FLOOR);
    expect(mean).toBeGreaterThan(2 * FLOOR);
    expect(receiver.maxOpen(path)).toBeLessThanOrEqual(GLOBAL / 2);
  });

  it('falls back to the floor when the endpoint answers 503 or times out, then grows again, losing no message', async () => {
    const { id, path } = await world.teamWithWebhook();
    answering(path, { status: 200, afterMs: 50 });
    const count = 4_000;
    await backlog([id], count, 'overload');
    await waitFor(() => receiver.openNow(path) >= 3 * FLOOR, 'the limit to grow', 60_000);

    answering(path, 503);
    await waitFor(() => dispatcher.limitOf(id) === FLOOR, 'the limit back at the floor after 503s', 30_000);
    expect(receiver.at(path).some((d) => d.answered === 503)).toBe(true);

    answering(path, { status: 200, afterMs: 50 });
    await waitFor(() => receiver.openNow(path) >= 3 * FLOOR, 'the limit to grow again', 60_000);

    // Timeouts: the requests in flight when the endpoint stopped answering time out a round at a
    // time, each round halving the limit, until no more than the floor are open at once.
    answering(path, 'hang');
    await waitFor(() => dispatcher.limitOf(id) === FLOOR, 'the limit back at the floor after timeouts', 8 * ATTEMPT_TIMEOUT_MS + 10_000);
    await waitFor(() => receiver.openNow(path) <= FLOOR, 'at most the floor open', 2 * ATTEMPT_TIMEOUT_MS + 5_000);
    receiver.resetOpen(path);
    await new Promise((resolve) => setTimeout(resolve, 2 * ATTEMPT_TIMEOUT_MS + 500));
    expect(receiver.maxOpen(path)).toBeLessThanOrEqual(FLOOR);

    answering(path, 200);
    await waitFor(async () => (await statuses(id)).success === count, 'every message delivered in the end', 120_000);
    expect(taken(path).size).toBe(count);
    // Each message kept its webhook-id across its attempts: no 2xx arrived under an id not in the table.
    const ids: { id: string }[] = await world.db.query(`SELECT id FROM webhook_messages WHERE webhook_id = $1`, [id]);
    const known = new Set(ids.map((r) => r.id));
    expect([...taken(path)].every((messageId) => known.has(messageId))).toBe(true);
  });

  it('does not hold a fast endpoint to the pace of a slow one with an older backlog, nor let the slow one take the process’s slots', async () => {
    const { team, id: slowId, path: slow } = await world.teamWithWebhook();
    answering(slow, { status: 200, afterMs: 600 });
    const slowCount = 1_500;
    await backlog([slowId], slowCount, 'slow');
    // The slow endpoint keeps up at its pace: its limit grows past the floor.
    await waitFor(() => receiver.openNow(slow) > 3 * FLOOR, 'the slow endpoint’s limit to grow', 60_000);
    // A new webhook whose messages are all newer than the slow one's backlog (more than the claim's window of oldest messages).
    const { id: fastId, path: fast } = await anotherWebhook(team);
    answering(fast, 200);
    const fastCount = 500;
    await backlog([fastId], fastCount, 'fast');
    const slowBefore = taken(slow).size;
    await waitFor(() => taken(fast).size === fastCount, 'the fast endpoint’s backlog delivered', 60_000);
    const slowDuring = taken(slow).size - slowBefore;
    console.log(
      `a fast endpoint beside a slow one (600 ms, ${slowCount} older messages): the fast one's ${fastCount} were delivered while the slow one took ${slowDuring}; at most ${receiver.maxOpen(slow)} open to the slow one`,
    );
    expect(slowDuring).toBeLessThan(slowCount / 2);
    // Alone it may hold at most half the process's slots (a share is always kept for a newcomer), beside another a third.
    expect(receiver.maxOpen(slow)).toBeLessThanOrEqual(GLOBAL / 2);
    answering(slow, 200);
    await waitFor(async () => (await statuses(slowId)).success === slowCount, 'the slow endpoint’s backlog delivered', 120_000);
  });

  it('shares the process’s slots between busy endpoints: each may hold a third of them when two are busy', async () => {
    const { team, id: a, path: pathA } = await world.teamWithWebhook();
    const { id: b, path: pathB } = await anotherWebhook(team);
    for (const path of [pathA, pathB]) answering(path, { status: 200, afterMs: 600 });
    const count = 400;
    await backlog([a, b], count, 'shared');
    await waitFor(async () => (await statuses(a)).success === count && (await statuses(b)).success === count, 'both backlogs delivered', 120_000);
    console.log(`two slow endpoints (600 ms) side by side: at most ${receiver.maxOpen(pathA)} and ${receiver.maxOpen(pathB)} open`);
    for (const path of [pathA, pathB]) {
      expect(receiver.maxOpen(path)).toBeGreaterThan(2 * FLOOR);
      expect(receiver.maxOpen(path)).toBeLessThanOrEqual(Math.floor(GLOBAL / 3));
    }
  });
});
