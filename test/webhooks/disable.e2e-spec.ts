import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { call, startTestApi, type TestApi, type TestTeam } from '../support/api-harness';
import { WebhookReceiver } from './webhook-receiver';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The 5-day rule on a compressed clock: an endpoint whose every delivery has failed for
 * `disableAfterMs` (here 1.5 s instead of 5 days) is disabled; a success in between starts the
 * count again.
 */
describe('webhooks: an endpoint failing for the whole window is disabled', () => {
  const DISABLE_AFTER_MS = 1_500;
  let api: TestApi;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    webhooks = await startWebhooks(
      api.config,
      {},
      {
        retryScheduleMs: [0, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
        pollIntervalMs: 25,
        attemptTimeoutMs: 2_000,
        disableAfterMs: DISABLE_AFTER_MS,
      },
    );
    receiver = await WebhookReceiver.start();
  });

  afterAll(async () => {
    await webhooks?.close();
    await receiver?.close();
    await api?.close();
  });

  const hook = async (team: TestTeam, path: string) => {
    const created = await team.resend.webhooks.create({ endpoint: receiver.url(path), events: ['domain.created'] });
    expect(created.error).toBeNull();
    return created.data!.id;
  };
  const status = async (team: TestTeam, id: string) => (await call(api.url, team.token, 'GET', `/webhooks/${id}`)).body.status as string;

  it('disables an endpoint that answered 500 to every attempt for the whole window, and says why', async () => {
    const team = await api.team();
    receiver.answer('/down', () => 500);
    const id = await hook(team, '/down');
    await team.resend.domains.create({ name: 'down.hooks.test' });

    const deadline = Date.now() + 10_000;
    while ((await status(team, id)) === 'enabled') {
      if (Date.now() > deadline) throw new Error('the failing endpoint was never disabled');
      await sleep(50);
    }
    const attempts = receiver.at('/down');
    // Disabled once the streak was older than the window, not at its first failure.
    expect(attempts.at(-1)!.at - attempts[0].at).toBeGreaterThanOrEqual(DISABLE_AFTER_MS - 250);
    const [row] = await api.app.get(DataSource).query(`SELECT disabled_reason FROM webhooks WHERE id = $1`, [id]);
    expect(row.disabled_reason).toMatch(/^every delivery failed for /);
  });

  it('keeps an endpoint that recovers in between enabled (a success restarts the count)', async () => {
    const team = await api.team();
    // The receiver fails the first attempt after each success, and every later one until a third
    // of a window has passed since that success: failures go on for more than two windows in all,
    // but no streak of failures ever lasts a window, however slowly the attempts come on a busy
    // machine.
    let lastSuccess = Date.now();
    let failedSinceSuccess = false;
    const codes: { at: number; code: number }[] = [];
    receiver.answer('/flaky', () => {
      const now = Date.now();
      const code = failedSinceSuccess && now - lastSuccess >= DISABLE_AFTER_MS / 3 ? 200 : 500;
      failedSinceSuccess = code === 500;
      if (code === 200) lastSuccess = now;
      codes.push({ at: now, code });
      return code;
    });
    const id = await hook(team, '/flaky');
    const failures = () => codes.filter((c) => c.code === 500);
    const successes = () => codes.filter((c) => c.code === 200).length;
    const deadline = Date.now() + 30_000;
    for (let i = 0; ; i++) {
      const failed = failures();
      if (failed.length > 1 && failed.at(-1)!.at - failed[0].at > 2 * DISABLE_AFTER_MS && successes() >= 3) break;
      if (Date.now() > deadline) throw new Error(`too few attempts arrived: ${JSON.stringify(codes)}`);
      await team.resend.domains.create({ name: `flaky${i}.hooks.test` });
      await sleep(250);
    }
    // Let the last outcomes be recorded before reading the status.
    await sleep(300);
    expect(await status(team, id)).toBe('enabled');
  });
});
