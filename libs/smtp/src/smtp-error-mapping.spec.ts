import { HeraldError, type HeraldErrorCode } from '@herald/core';
import { smtpReplyFor } from './smtp-error-mapping';

const wire = (code: HeraldErrorCode, message = 'detail', retryAfterSeconds?: number): string | null => {
  const reply = smtpReplyFor(new HeraldError(code, message, retryAfterSeconds));
  return reply && `${reply.code} ${reply.enhanced} ${reply.message}`;
};

describe('smtpReplyFor', () => {
  it.each<[HeraldErrorCode, string]>([
    ['missing_api_key', '535 5.7.8 Authentication credentials invalid'],
    ['invalid_api_key', '535 5.7.8 Authentication credentials invalid'],
    ['restricted_api_key', '535 5.7.8 Authentication credentials invalid'],
    ['forbidden_from_domain', '550 5.7.1 detail'],
    ['invalid_region', '550 5.7.1 detail'],
    ['domain_paused', '550 5.7.1 detail'],
    ['quota_reached', '550 5.7.1 detail'],
    ['validation_error', '550 5.6.0 detail'],
    ['daily_quota_exceeded', '451 4.7.1 Daily quota exceeded: detail'],
    ['monthly_quota_exceeded', '451 4.7.1 Monthly quota exceeded: detail'],
    ['invalid_idempotency_key', '550 5.6.0 The Herald-Idempotency-Key (or Resend-Idempotency-Key) header must be one value of 1-256 characters'],
    ['invalid_idempotent_request', '550 5.7.0 The idempotency key was already used with a different message; use a new key'],
    ['concurrent_idempotent_requests', '451 4.7.0 A message with the same idempotency key is being processed, try again'],
    ['service_unavailable', '451 4.3.0 Service temporarily unavailable, try again later'],
  ])('%s is answered %p', (code, reply) => {
    expect(wire(code)).toBe(reply);
  });

  it('rate_limit_exceeded says when to come back, as the MAIL FROM check does', () => {
    expect(wire('rate_limit_exceeded', 'Too many requests.', 7)).toBe('451 4.7.1 Rate limit exceeded, try again in 7 s');
  });

  it('temporary conditions are 4xx and refusals of the message 5xx (Postal: soft and hard failures)', () => {
    expect(wire('daily_quota_exceeded')).toMatch(/^4\d\d 4\./);
    expect(wire('forbidden_from_domain')).toMatch(/^5\d\d 5\./);
  });

  it.each<HeraldErrorCode>(['not_found', 'uri_too_long', 'malformed_request', 'application_error'])(
    '%s is no refusal of the client: the step answers its own temporary failure',
    (code) => {
      expect(wire(code)).toBeNull();
    },
  );
});
