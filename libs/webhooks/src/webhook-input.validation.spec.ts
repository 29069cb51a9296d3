import { HeraldError } from '@herald/core';
import { addressAllowList, classifyHost } from './endpoint-address';
import { validateCreateWebhook, validateUpdateWebhook, validateWebhookListQuery } from './webhook-input.validation';

const PROD = { allowHttp: false, allowed: addressAllowList([]) };
const DEV = { allowHttp: true, allowed: addressAllowList(['127.0.0.0/8', '::1']) };

function error(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof HeraldError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('did not throw');
}

describe('webhook input validation', () => {
  it('accepts an https endpoint and known events, deduplicated', () => {
    expect(validateCreateWebhook({ endpoint: 'https://example.com/hook', events: ['email.sent', 'email.sent', 'domain.created'] }, PROD)).toEqual({
      endpoint: 'https://example.com/hook',
      events: ['email.sent', 'domain.created'],
    });
  });

  it('requires endpoint and events, naming them', () => {
    expect(error(() => validateCreateWebhook({ events: ['email.sent'] }, PROD)).message).toContain('`endpoint`');
    expect(error(() => validateCreateWebhook({ endpoint: 'https://example.com' }, PROD)).message).toContain('`events`');
    expect(error(() => validateCreateWebhook({ endpoint: 'https://example.com', events: [] }, PROD)).message).toContain('`events`');
  });

  it('names an unknown event type, and refuses the ones Herald does not emit', () => {
    for (const type of ['email.nope', 'email.received', 'inbox.created']) {
      expect(error(() => validateCreateWebhook({ endpoint: 'https://example.com', events: ['email.sent', type] }, PROD)).message).toContain(
        `\`${type}\``,
      );
    }
  });

  it('refuses relative, non-http, credentialed and over-long endpoints', () => {
    for (const endpoint of [
      '/hook',
      'example.com/hook',
      'ftp://example.com',
      'https://user:pw@example.com/',
      `https://example.com/${'a'.repeat(2048)}`,
      42,
    ]) {
      expect(error(() => validateCreateWebhook({ endpoint, events: ['email.sent'] }, PROD)).message).toContain('`endpoint`');
    }
  });

  it('accepts http only outside production', () => {
    expect(error(() => validateCreateWebhook({ endpoint: 'http://example.com/', events: ['email.sent'] }, PROD)).message).toContain('https');
    expect(validateCreateWebhook({ endpoint: 'http://example.com/', events: ['email.sent'] }, DEV).endpoint).toBe('http://example.com/');
  });

  it('refuses literal private, link-local and metadata addresses always, loopback in production', () => {
    const privates = [
      'https://10.0.0.1/',
      'https://172.16.0.1/',
      'https://172.31.255.255/',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest',
      'https://[fc00::1]/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://[::ffff:169.254.169.254]/',
      'https://0.0.0.0/',
      'https://[::]/',
    ];
    for (const endpoint of privates) {
      expect({ endpoint, ...error(() => validateCreateWebhook({ endpoint, events: ['email.sent'] }, DEV)) }).toMatchObject({
        endpoint,
        code: 'validation_error',
      });
    }
    const loopbacks = [
      'https://127.0.0.1/',
      'https://127.1.2.3/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://2130706433/',
      'https://0x7f.0.0.1/',
      'https://localhost/',
    ];
    for (const endpoint of loopbacks) {
      expect(() => validateCreateWebhook({ endpoint, events: ['email.sent'] }, PROD)).toThrow('private, loopback');
      expect(() => validateCreateWebhook({ endpoint, events: ['email.sent'] }, DEV)).not.toThrow();
    }
    for (const host of ['8.8.8.8', '172.32.0.1', '[2606:4700::1]', 'example.com']) expect(classifyHost(host)).toBe('public');
  });

  it('validates updates field by field', () => {
    expect(validateUpdateWebhook({}, PROD)).toEqual({});
    expect(validateUpdateWebhook({ status: 'disabled', events: ['contact.updated'] }, PROD)).toEqual({
      status: 'disabled',
      events: ['contact.updated'],
    });
    expect(error(() => validateUpdateWebhook({ status: 'paused' }, PROD)).message).toContain('`status`');
    expect(error(() => validateUpdateWebhook({ endpoint: 'https://10.1.1.1/' }, PROD)).message).toContain('`endpoint`');
  });

  it('pages 1–100 by id cursors', () => {
    expect(validateWebhookListQuery({})).toEqual({ limit: 20, after: null, before: null });
    expect(validateWebhookListQuery({ limit: '5' })).toMatchObject({ limit: 5 });
    expect(() => validateWebhookListQuery({ limit: '0' })).toThrow('limit');
    expect(() => validateWebhookListQuery({ after: 'x' })).toThrow('`after`');
  });
});
