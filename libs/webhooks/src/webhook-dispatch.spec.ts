import { addressAllowList } from './endpoint-address';
import { checkedAddress } from './webhook-http.client';

const NONE = addressAllowList([]);
const LOOPBACK = addressAllowList(['127.0.0.0/8', '::1']);
import { DEFAULT_DISPATCH_OPTIONS, DEFAULT_RETRY_SCHEDULE_MS, nextRetryDelayMs, parseRetryAfter } from './webhook-dispatch.options';
import { settle, signedHeaders } from './webhook-dispatcher.service';
import { signPayload } from './webhook-secrets';

const now = new Date('2026-11-25T12:00:00Z');
const options = DEFAULT_DISPATCH_OPTIONS;
const response = (statusCode: number, retryAfter?: string) => ({ kind: 'response' as const, statusCode, retryAfter, excerpt: '', durationMs: 5 });

describe('retry schedule', () => {
  it('is Resend’s table: the first attempt immediately, then 5 s … 10 h, eight attempts in all', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  });

  it('jitters by ±10% and gives up after the last attempt', () => {
    expect(nextRetryDelayMs(options, 1, null, () => 0)).toBe(4_500);
    expect(nextRetryDelayMs(options, 1, null, () => 1)).toBe(5_500);
    expect(nextRetryDelayMs(options, 7, null, () => 0.5)).toBe(36_000_000);
    expect(nextRetryDelayMs(options, 8, null)).toBeNull();
  });

  it('honours a longer Retry-After (seconds), capped, and ignores a shorter one or a date', () => {
    expect(nextRetryDelayMs(options, 1, parseRetryAfter('120'), () => 0.5)).toBe(120_000);
    expect(nextRetryDelayMs(options, 2, parseRetryAfter('1'), () => 0.5)).toBe(300_000);
    expect(nextRetryDelayMs(options, 1, parseRetryAfter('999999999'), () => 0.5)).toBe(options.maxRetryAfterMs);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT')).toBeNull();
  });
});

describe('settle', () => {
  it('maps an attempt to the message’s fate', () => {
    expect(settle(response(204), 1, options, now)).toEqual({ status: 'success' });
    expect(settle(response(410), 1, options, now)).toEqual({ status: 'failed', disableWebhook: 'endpoint answered 410 Gone' });
    for (const failed of [response(500), response(302), response(404), { kind: 'error' as const, error: 'timed out', durationMs: 1 }]) {
      const next = settle(failed, 1, options, now);
      expect(next.status).toBe('pending');
    }
    expect(settle({ kind: 'refused', error: 'refused', durationMs: 0 }, 8, options, now)).toEqual({ status: 'failed', disableWebhook: null });
  });
});

describe('signedHeaders', () => {
  it('signs with every secret valid now, in both header families, with the message id', () => {
    const message = {
      id: 'msg_1',
      signingSecret: 'whsec_' + Buffer.from('new-key').toString('base64'),
      previousSecret: 'whsec_' + Buffer.from('old-key').toString('base64'),
      previousSecretExpiresAt: new Date(now.getTime() + 1000),
    };
    const headers = signedHeaders(message, '{"a":1}', now);
    const ts = Math.floor(now.getTime() / 1000);
    const expected = `${signPayload(message.signingSecret, 'msg_1', ts, '{"a":1}')} ${signPayload(message.previousSecret, 'msg_1', ts, '{"a":1}')}`;
    expect(headers).toMatchObject({ 'webhook-id': 'msg_1', 'svix-id': 'msg_1', 'webhook-timestamp': String(ts), 'svix-timestamp': String(ts) });
    expect(headers['webhook-signature']).toBe(expected);
    expect(headers['svix-signature']).toBe(expected);
    const expired = signedHeaders({ ...message, previousSecretExpiresAt: now }, '{"a":1}', now);
    expect(expired['webhook-signature'].split(' ')).toHaveLength(1);
  });
});

describe('checkedAddress (SSRF guard at delivery)', () => {
  const resolvesTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('refuses names resolving to private, link-local, metadata or mapped addresses', async () => {
    for (const address of ['10.1.2.3', '192.168.0.1', '169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '0.0.0.0']) {
      await expect(checkedAddress('hooks.example.com', LOOPBACK, resolvesTo(address))).resolves.toMatch(
        /^refused: hooks.example.com resolves to private/,
      );
    }
  });

  it('refuses a name with one private record among public ones', async () => {
    await expect(checkedAddress('mixed.example.com', NONE, resolvesTo('93.184.216.34', '10.0.0.1'))).resolves.toMatch(/refused/);
  });

  it('allows loopback only when told to, and public addresses always', async () => {
    await expect(checkedAddress('localhost', NONE, resolvesTo('127.0.0.1'))).resolves.toMatch(/refused: .* loopback/);
    await expect(checkedAddress('localhost', LOOPBACK, resolvesTo('127.0.0.1'))).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(checkedAddress('example.com', NONE, resolvesTo('93.184.216.34'))).resolves.toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('reports a name that does not resolve', async () => {
    const fails = async () => {
      throw new Error('ENOTFOUND');
    };
    await expect(checkedAddress('nowhere.invalid', NONE, fails)).resolves.toMatch(/could not resolve nowhere.invalid/);
  });
});
