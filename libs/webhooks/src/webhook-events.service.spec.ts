import { HeraldError } from '@herald/core';
import { loadConfig, pick } from '@herald/config';
import { dispatchOptionsFromConfig } from './webhook-dispatch.options';
import { validateLogPage } from './webhook-events.service';
import { WEBHOOKS_CONFIG } from './webhooks.config';

const isMessageId = (v: string) => /^msg_[0-9a-f]{32}$/.test(v);

describe('validateLogPage (event log and attempts paging)', () => {
  it('defaults to 20 and takes limit and after', () => {
    expect(validateLogPage({}, isMessageId, 'an event id')).toEqual({ limit: 20, after: null });
    const after = `msg_${'a'.repeat(32)}`;
    expect(validateLogPage({ limit: '5', after }, isMessageId, 'an event id')).toEqual({ limit: 5, after });
  });

  it('refuses a limit outside 1–100, `before`, and a malformed cursor', () => {
    for (const limit of ['0', '101', 'x', '1.5']) expect(() => validateLogPage({ limit }, isMessageId, 'an event id')).toThrow(/between 1 and 100/);
    expect(() => validateLogPage({ before: `msg_${'a'.repeat(32)}` }, isMessageId, 'an event id')).toThrow(/`before`/);
    let error: unknown;
    try {
      validateLogPage({ after: 'nope' }, isMessageId, 'an event id');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HeraldError);
    expect((error as HeraldError).code).toBe('invalid_parameter');
  });
});

describe('dispatchOptionsFromConfig', () => {
  it('takes the WEBHOOK_* settings, the schedule in milliseconds', () => {
    const options = dispatchOptionsFromConfig(
      pick(
        loadConfig({
          WEBHOOK_RETRY_SCHEDULE: '0,2,60',
          WEBHOOK_ATTEMPT_TIMEOUT_MS: '5000',
          WEBHOOK_CONCURRENCY: '32',
          WEBHOOK_CONCURRENCY_PER_ENDPOINT: '2',
          WEBHOOK_ALLOW_HTTP: 'true',
          WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8',
        }),
        WEBHOOKS_CONFIG.keys,
      ),
    );
    expect(options).toMatchObject({
      retryScheduleMs: [0, 2000, 60000],
      attemptTimeoutMs: 5000,
      globalConcurrency: 32,
      perWebhookConcurrency: 2,
      maxPerWebhookConcurrency: 64,
      allowHttp: true,
      allowedAddresses: ['127.0.0.0/8'],
    });
  });

  it('caps the adapted per-endpoint concurrency at WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT, by default 64 or the floor when higher', () => {
    const options = (env: Record<string, string>) => dispatchOptionsFromConfig(pick(loadConfig(env), WEBHOOKS_CONFIG.keys));
    expect(options({})).toMatchObject({ perWebhookConcurrency: 4, maxPerWebhookConcurrency: 64 });
    expect(options({ WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT: '200' })).toMatchObject({ maxPerWebhookConcurrency: 200 });
    expect(options({ WEBHOOK_CONCURRENCY_PER_ENDPOINT: '100' })).toMatchObject({ perWebhookConcurrency: 100, maxPerWebhookConcurrency: 100 });
  });
});
