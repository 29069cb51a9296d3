import { Client } from 'pg';
import { startTestApi, type TestApi } from '../support/api-harness';
import { envOf } from '../support/herald-process';
import {
  deleteMetricsConsumer,
  metricsConsumerState,
  mixedEvents,
  publishEvents,
  recountRows,
  rollupRows,
  schemaClient,
  seedEmails,
  storeEvents,
} from '../support/metrics-world';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../support/worker-process';

// 10,000 emails (about 31,000 events), published twice in part, a child metrics role killed and
// restarted, then a replay: a few minutes when the other lane is busy.
jest.setTimeout(360_000);

/**
 * The metrics role (a real `herald metrics` child process) counts a mixed run of 10,000 emails
 * (their events: sent, delivered, bounced, delayed, complained, opened, clicked) into rollups that equal a recount of the stored events (email_events, by SQL of
 * the test's own), although the stream carries a thousand events twice, the role is killed with
 * SIGKILL after its first commits and started again, and its durable is then deleted so a new
 * process replays the whole stream.
 */
describe('metrics rollups', () => {
  let api: TestApi;
  let db: Client;
  let metrics: WorkerProcess | null = null;

  beforeAll(async () => {
    api = await startTestApi();
    db = await schemaClient(api.config);
  });

  afterAll(async () => {
    await metrics?.stop('SIGKILL');
    await db?.end();
    await api?.close();
  });

  const env = () => envOf(api.config, { METRICS_ACK_WAIT_MS: '2000' });
  const counted = async () => Number((await db.query('SELECT count(*) FROM counted_events')).rows[0].count);

  /** Every event handed out and acked, and every distinct one counted. */
  const settled = (distinct: number) => async () => {
    const state = await metricsConsumerState(api.config);
    const n = await counted();
    return (state?.pending === 0 && state.ackPending === 0 && n === distinct) || `${JSON.stringify(state)}, ${n} of ${distinct} counted`;
  };

  it('equals a recount of the stored events, through redeliveries, a SIGKILL and a replay', async () => {
    const teams = [await api.team(), await api.team()];
    const emails = [...(await seedEmails(api, teams[0]!, 6000)), ...(await seedEmails(api, teams[1]!, 4000))];
    expect(emails).toHaveLength(10_000);
    const events = mixedEvents(emails);
    expect(events.length).toBeGreaterThanOrEqual(20_000);
    await storeEvents(db, events);
    const [first, second] = [events.slice(0, 10_000), events.slice(10_000)];

    await publishEvents(api.config, first);
    metrics = await startWorkerProcess(env(), { role: 'metrics' });
    await waitUntil('the first batches to commit', async () => (await counted()) > 0, 30_000, 10);
    await metrics.stop('SIGKILL');
    const atKill = await counted();
    expect(atKill).toBeLessThan(events.length);

    // The rest of the run, and 3,000 events a second time under new message ids (a republish).
    await publishEvents(api.config, second);
    await publishEvents(api.config, events.slice(2000, 5000), '#again');
    metrics = await startWorkerProcess(env(), { role: 'metrics' });
    await waitUntil('every event counted after the restart', settled(events.length), 120_000, 100);
    const recount = await recountRows(db);
    expect(recount.length).toBeGreaterThan(50);
    expect(await rollupRows(db)).toEqual(recount);

    // A replay of the whole stream (a new durable delivers every event again) changes nothing.
    await metrics.stop('SIGTERM');
    await deleteMetricsConsumer(api.config);
    metrics = await startWorkerProcess(env(), { role: 'metrics' });
    await waitUntil('the replay to be consumed', settled(events.length), 120_000, 100);
    expect(await rollupRows(db)).toEqual(recount);
  });
});
