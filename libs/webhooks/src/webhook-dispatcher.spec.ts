import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import type { EmailPlanes } from '@herald/database';
import { StrandedClaimsError, WebhookClaimsRepository, type ClaimedMessages } from './webhook-claims.repository';
import { WebhookDispatcher } from './webhook-dispatcher.service';
import { type AttemptOutcome, type DueMessage, WebhookHealthNotRecordedError, type WebhookMessagesRepository } from './webhook-messages.repository';
import type { WebhooksConfig } from './webhooks.config';

const CONFIG = {
  WEBHOOK_RETRY_SCHEDULE: [0, 5],
  WEBHOOK_ATTEMPT_TIMEOUT_MS: 2_000,
  WEBHOOK_CONCURRENCY: 8,
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: 2,
  WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT: 4,
  WEBHOOK_ALLOW_HTTP: true,
  WEBHOOK_ALLOWED_ADDRESSES: ['127.0.0.0/8'],
  WEBHOOK_DISABLE_AFTER_HOURS: 120,
} as unknown as WebhooksConfig;

/** What node-pg throws when Postgres has gone away mid-statement. */
const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

/** Claims and messages in memory: the calls made, and scripted answers. */
function fakes(claimAnswers: (() => Promise<ClaimedMessages>)[], recordAnswers: (() => Promise<void>)[] = []) {
  const calls: string[] = [];
  const recorded: AttemptOutcome[][] = [];
  const claims = {
    webhooksWithDueMessages: async () => ({ due: [], stopped: [] }),
    claimDue: () => {
      calls.push('claimDue');
      return (claimAnswers.shift() ?? (async () => ({ due: [], stopped: [] })))();
    },
    releaseClaims: async (ids: readonly string[]) => {
      calls.push(`releaseClaims ${ids.join(',')}`);
    },
  } as unknown as WebhookClaimsRepository;
  const messages = {
    recordAttempts: async (outcomes: readonly AttemptOutcome[]) => {
      calls.push('recordAttempts');
      await (recordAnswers.shift() ?? (async () => undefined))();
      recorded.push([...outcomes]);
    },
  } as unknown as WebhookMessagesRepository;
  return { calls, recorded, claims, messages };
}

describe('WebhookDispatcher when Postgres goes away between statements', () => {
  let server: Server;
  let endpoint: string;
  const received: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      received.push(String(req.headers['webhook-id']));
      req.resume().on('end', () => res.writeHead(200).end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const message = (id: string): DueMessage => ({
    id,
    webhookId: '0b6c3f2e-9d1a-4c55-8f0e-1d2c3b4a5f60',
    teamId: '7e1d2c3b-4a5f-4e6d-9c8b-0a1b2c3d4e5f',
    payload: { type: 'email.sent', created_at: '2026-11-27T00:00:00.000Z', data: {} },
    attempts: 0,
    endpoint,
    signingSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    previousSecret: null,
    previousSecretExpiresAt: null,
  });

  it('hands back, at its next poll, the messages a claim took but could not read', async () => {
    const { calls, claims, messages } = fakes([() => Promise.reject(new StrandedClaimsError(['msg_a', 'msg_b'], reset()))]);
    const dispatcher = new WebhookDispatcher(messages, claims, CONFIG, null, null);
    await expect(dispatcher.poll()).rejects.toThrow('read ECONNRESET');
    await dispatcher.poll();
    expect(calls).toEqual(['claimDue', 'releaseClaims msg_a,msg_b', 'claimDue']);
    await dispatcher.onModuleDestroy();
  });

  it('keeps them to hand back while Postgres still cannot take the hand-back', async () => {
    const { calls, claims, messages } = fakes([() => Promise.reject(new StrandedClaimsError(['msg_a'], reset()))]);
    let refuse = true;
    const release = claims.releaseClaims.bind(claims);
    claims.releaseClaims = (ids) => (refuse ? Promise.reject(reset()) : release(ids));
    const dispatcher = new WebhookDispatcher(messages, claims, CONFIG, null, null);
    await expect(dispatcher.poll()).rejects.toThrow();
    await expect(dispatcher.poll()).rejects.toThrow('read ECONNRESET');
    refuse = false;
    await dispatcher.poll();
    expect(calls).toEqual(['claimDue', 'releaseClaims msg_a', 'claimDue']);
    await dispatcher.onModuleDestroy();
  });

  it('records a delivered attempt once Postgres answers again, instead of leaving it to be sent twice', async () => {
    const { calls, recorded, claims, messages } = fakes(
      [async () => ({ due: [message('msg_once')], stopped: [] })],
      [() => Promise.reject(reset()), () => Promise.reject(reset())],
    );
    const dispatcher = new WebhookDispatcher(messages, claims, CONFIG, null, null);
    received.length = 0;
    expect(await dispatcher.poll()).toBe(1);
    // 250 ms, then 500 ms between the tries.
    for (let waited = 0; recorded.length === 0 && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(received).toEqual(['msg_once']);
    expect(calls.filter((c) => c === 'recordAttempts')).toHaveLength(3);
    expect(recorded.flat().map((o) => [o.attempt.messageId, o.settlement.status])).toEqual([['msg_once', 'success']]);
    await dispatcher.onModuleDestroy();
  });

  it('does not retry an outcome Postgres refused for another reason', async () => {
    const refused = Object.assign(new Error('value too long for type character varying(255)'), { code: '22001' });
    const { calls, claims, messages } = fakes([async () => ({ due: [message('msg_bad')], stopped: [] })], [() => Promise.reject(refused)]);
    const dispatcher = new WebhookDispatcher(messages, claims, CONFIG, null, null);
    await dispatcher.poll();
    await dispatcher.onModuleDestroy();
    expect(calls.filter((c) => c === 'recordAttempts')).toHaveLength(1);
  });

  it('does not record again an outcome recorded but for its webhook’s health (its attempt would be recorded twice)', async () => {
    const healthLost = new WebhookHealthNotRecordedError([message('msg_health').webhookId], reset());
    const { calls, claims, messages } = fakes([async () => ({ due: [message('msg_health')], stopped: [] })], [() => Promise.reject(healthLost)]);
    const dispatcher = new WebhookDispatcher(messages, claims, CONFIG, null, null);
    received.length = 0;
    await dispatcher.poll();
    await dispatcher.onModuleDestroy();
    expect(received).toEqual(['msg_health']);
    expect(calls.filter((c) => c === 'recordAttempts')).toHaveLength(1);
  });
});

describe('WebhookClaimsRepository.claimDue when the read after its claim fails', () => {
  it('names what the committed claim took, for the dispatcher to hand back', async () => {
    const claimed = ['msg_1', 'msg_2'].map((id) => ({
      id,
      webhook_id: '0b6c3f2e-9d1a-4c55-8f0e-1d2c3b4a5f60',
      team_id: '7e1d2c3b-4a5f-4e6d-9c8b-0a1b2c3d4e5f',
      payload: {},
      attempts: 0,
      was_status: 'pending',
      was_due: '2026-11-27 00:00:00+00',
    }));
    const db = {
      // The claim's transaction commits; the next statement (the webhooks' read) finds Postgres gone.
      transaction: async (work: (tx: { query: () => Promise<unknown> }) => Promise<unknown>) => work({ query: async () => claimed }),
      query: () => Promise.reject(reset()),
    } as unknown as DataSource;
    const error = await new WebhookClaimsRepository({ home: db } as unknown as EmailPlanes, db)
      .claimDue(10, 120_000, 4, new Map())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StrandedClaimsError);
    expect((error as StrandedClaimsError).ids).toEqual(['msg_1', 'msg_2']);
    expect(((error as StrandedClaimsError).cause as Error).message).toBe('read ECONNRESET');
  });
});
