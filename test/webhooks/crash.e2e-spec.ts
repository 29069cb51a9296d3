import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { DataSource } from 'typeorm';
import { envOf, freePort } from '../support/herald-process';
import { startTestApi, TestApi } from '../support/api-harness';
import { ReceivedDelivery, WebhookReceiver } from './webhook-receiver';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

interface WebhooksProcess {
  child: ChildProcess;
  exited: Promise<unknown>;
  stderr(): string;
}

/** `node bin/herald.js webhooks` as a real child process, ready once its ops port answers /health/ready. */
async function startWebhooksProcess(env: NodeJS.ProcessEnv): Promise<WebhooksProcess> {
  const opsPort = await freePort();
  const child = spawn(process.execPath, [BIN, 'webhooks'], { env: { ...env, OPS_PORT: String(opsPort) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit');
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`herald webhooks exited early: ${stderr}`);
    if (
      await fetch(`http://127.0.0.1:${opsPort}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`herald webhooks did not become ready: ${stderr}`);
    await sleep(100);
  }
  return { child, exited, stderr: () => stderr };
}

async function stop(process: WebhooksProcess | null, signal: NodeJS.Signals): Promise<void> {
  if (!process) return;
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill(signal);
  await process.exited;
}

/**
 * kill -9 of the dispatcher in the middle of a retry sequence: the webhooks role runs as a real
 * child process (`herald webhooks`, compressed retry schedule), its endpoint fails, the process
 * is killed without a chance to clean up, and a fresh process still delivers the event, under
 * the same message id, exactly once successfully, with every attempt of both processes recorded.
 */
describe('webhooks: kill -9 of the dispatcher mid-retry', () => {
  let api: TestApi;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let env: NodeJS.ProcessEnv;
  let first: WebhooksProcess | null = null;
  let second: WebhooksProcess | null = null;

  beforeAll(async () => {
    // The local receiver is plain http on loopback, which only these switches permit.
    const local = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8,::1' };
    api = await startTestApi(local);
    receiver = await WebhookReceiver.start();
    db = api.app.get(DataSource);
    env = envOf(api.config, {
      ...local,
      // Seconds: immediately, then every second (the production schedule is 0, 5 s, 5 min, ...).
      WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1',
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '3000',
    });
  });
  afterAll(async () => {
    await stop(first, 'SIGKILL');
    await stop(second, 'SIGTERM');
    await receiver?.close();
    await api?.close();
  });

  it('delivers the event after a restart, with the same webhook-id, exactly once successfully', async () => {
    const team = await api.team();
    const path = '/crash';
    const created = await team.resend.webhooks.create({ endpoint: receiver.url(path), events: ['domain.created'] });
    expect(created.error).toBeNull();
    const webhookId = created.data!.id;
    const secret = created.data!.signing_secret;

    let healthy = false;
    receiver.answer(path, () => (healthy ? 200 : 500));
    first = await startWebhooksProcess(env);

    const name = `${randomUUID().slice(0, 8)}.crash.test`;
    expect((await team.resend.domains.create({ name })).error).toBeNull();
    const deliveries = () => receiver.at(path).filter((d) => d.json.data.name === name);

    type MessageRow = { id: string; status: string; attempts: number };
    // The message of this domain's event (the team's own domain made an earlier domain.created).
    const message = async (): Promise<MessageRow | undefined> =>
      (
        (await db.query(`SELECT id, status, attempts FROM webhook_messages WHERE webhook_id = $1 AND payload->'data'->>'name' = $2`, [
          webhookId,
          name,
        ])) as MessageRow[]
      )[0];

    // The first attempt and a retry have failed and the message waits for the next one: kill -9 there.
    await waitFor(async () => {
      const m = await message();
      return m !== undefined && m.status === 'pending' && m.attempts >= 2;
    }, 'two failed attempts to be recorded');
    first.child.kill('SIGKILL');
    const [, signal] = (await first.exited) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
    const killedAt = Date.now();
    first = null;

    const before = await message();
    const failedBeforeKill = deliveries().length;
    expect(failedBeforeKill).toBeGreaterThanOrEqual(2);
    expect(before!.attempts).toBe(failedBeforeKill);

    healthy = true;
    second = await startWebhooksProcess(env);
    await waitFor(async () => (await message())?.status === 'success', 'the delivery after the restart');
    // Nothing more arrives: the success is final.
    await sleep(1_500);

    const all = deliveries();
    const ids = new Set(all.map((d) => d.headers['webhook-id']));
    expect(ids).toEqual(new Set([before!.id]));
    // Both verifiers accept every attempt, failed or not (they throw on a bad signature).
    const headers = (d: ReceivedDelivery) => d.headers as Record<string, string>;
    for (const d of all) {
      expect(new StandardWebhook(secret).verify(d.body, headers(d))).toEqual(d.json);
      expect(new SvixWebhook(secret).verify(d.body, headers(d))).toEqual(d.json);
    }
    const successes = all.filter((d) => d.at >= killedAt);
    expect(successes).toHaveLength(1);
    expect(all.filter((d) => d.at < killedAt)).toHaveLength(failedBeforeKill);

    const attempts: { attempt: number; status_code: number | null; sent_at: Date }[] = await db.query(
      `SELECT attempt, status_code, sent_at FROM webhook_attempts WHERE message_id = $1 ORDER BY attempt`,
      [before!.id],
    );
    // Every attempt of both processes, numbered on: the failures of the first, then the success of the second.
    expect(attempts.map((a) => a.attempt)).toEqual(attempts.map((_, i) => i + 1));
    expect(attempts).toHaveLength(all.length);
    expect(attempts.slice(0, -1).every((a) => a.status_code === 500 && a.sent_at.getTime() < killedAt)).toBe(true);
    expect(attempts.at(-1)).toMatchObject({ status_code: 200 });
    expect(attempts.at(-1)!.sent_at.getTime()).toBeGreaterThanOrEqual(killedAt);
    expect(await message()).toMatchObject({ status: 'success', attempts: attempts.length });
  });
});
