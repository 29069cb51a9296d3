import type { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { OpsServer } from '@herald/observability';
import { eventually, isolatedConfig, IsolatedConfig } from '@herald/testing';
import { startApi } from '../../apps/api/src/api.app';
import { startSmtp } from '../../apps/smtp/src/smtp.app';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { startWorker } from '../../apps/worker/src/worker.app';
import { freePort } from '../support/herald-process';

interface Readiness {
  status: number;
  body: { status: string; checks: Record<string, string> };
}

const readiness = async (url: string): Promise<Readiness> => {
  const response = await fetch(`${url}/health/ready`);
  return { status: response.status, body: (await response.json()) as Readiness['body'] };
};
const opsUrl = (app: INestApplicationContext) => `http://127.0.0.1:${app.get(OpsServer).port()}`;

/**
 * Each role checks the connections it uses and no others. For the worker and the webhooks role,
 * which do not use Redis, REDIS_URL points at a port where nothing listens: they boot and are
 * simply ready. The API and the SMTP relay use Redis and check it (that they stay ready, degraded,
 * when it fails is test/api/redis-outage.e2e-spec.ts).
 */
describe('readiness of each role', () => {
  let isolated: IsolatedConfig;
  let config: HeraldConfig;
  let withoutRedis: HeraldConfig;
  const started: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    isolated = await isolatedConfig();
    config = isolated.config;
    withoutRedis = { ...config, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
  });

  afterAll(async () => {
    for (const app of started.reverse()) await app.close();
    await isolated.cleanup();
  });

  it('the worker checks Postgres and NATS only', async () => {
    const worker = await startWorker(withoutRedis);
    started.push(worker);
    expect(await readiness(opsUrl(worker))).toEqual({ status: 200, body: { status: 'ok', checks: { postgres: 'up', nats: 'up' } } });
  });

  it('the webhooks role checks Postgres and NATS only', async () => {
    const webhooks = await startWebhooks(withoutRedis);
    started.push(webhooks);
    expect(await readiness(opsUrl(webhooks))).toEqual({ status: 200, body: { status: 'ok', checks: { postgres: 'up', nats: 'up' } } });
  });

  it('the SMTP relay and the API also check Redis', async () => {
    const smtp = await startSmtp(config);
    started.push(smtp);
    const api = await startApi(config);
    started.push(api);
    const ready = { status: 200, body: { status: 'ok', checks: { postgres: 'up', redis: 'up', nats: 'up' } } };
    // Redis reads "degraded" until the client's first probe PING is answered, which a busy machine can delay.
    // The smtp role is ready only once its listeners are bound, the relay's and the bounce MX's.
    const smtpReady = { ...ready, body: { ...ready.body, checks: { ...ready.body.checks, smtp_relay: 'up', bounce_mx: 'up' } } };
    await eventually(async () => expect(await readiness(opsUrl(smtp))).toEqual(smtpReady), 10_000);
    await eventually(async () => expect(await readiness(api.url)).toEqual(ready), 10_000);
  });
});
