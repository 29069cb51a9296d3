import type { HeraldError } from '@herald/core';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '@herald/idempotency';
import { smtpReply, SMTP_SUBMISSION_REPLIES, type SmtpReply } from './smtp-replies';

/**
 * The one place a domain error becomes an SMTP reply, as libs/http/src/error-mapping.ts is for
 * HTTP. Temporary conditions (quotas, rate, a key in use, an outage) are 4xx so the client keeps
 * the message and retries; a message that can never be accepted is 5xx. Null: a code the SMTP
 * path never raises as a refusal of the client (HTTP-only failures, unexpected states); the step
 * answers its own temporary failure, as Postfix does for a lookup it cannot complete.
 */
export function smtpReplyFor(error: HeraldError): SmtpReply | null {
  const { code } = error;
  switch (code) {
    case 'missing_api_key':
    case 'invalid_api_key':
    case 'restricted_api_key':
      return SMTP_SUBMISSION_REPLIES.invalidCredentials;
    case 'forbidden_from_domain':
    // A broadcast's quota check (never a relayed message's): what the plan allows.
    case 'quota_reached':
    // Paused until its owner resumes it: retrying the message would not help.
    case 'domain_paused':
    // The `from` domain's region is not served here: no worker would ever deliver the message.
    case 'invalid_region':
      return smtpReply(550, '5.7.1', error.message);
    case 'validation_error':
      return smtpReply(550, '5.6.0', error.message);
    case 'daily_quota_exceeded':
      return smtpReply(451, '4.7.1', `Daily quota exceeded: ${error.message}`);
    case 'monthly_quota_exceeded':
      return smtpReply(451, '4.7.1', `Monthly quota exceeded: ${error.message}`);
    case 'rate_limit_exceeded':
      return SMTP_SUBMISSION_REPLIES.rateLimited(error.retryAfterSeconds ?? 1);
    case 'invalid_idempotency_key':
      return SMTP_SUBMISSION_REPLIES.badIdempotencyKey(IDEMPOTENCY_KEY_MAX_LENGTH);
    case 'invalid_idempotent_request':
      return smtpReply(550, '5.7.0', 'The idempotency key was already used with a different message; use a new key');
    case 'concurrent_idempotent_requests':
      return smtpReply(451, '4.7.0', 'A message with the same idempotency key is being processed, try again');
    case 'service_unavailable':
      // Postfix's answer to a table it cannot read: 451 4.3.0; the client keeps the message and retries.
      return smtpReply(451, '4.3.0', 'Service temporarily unavailable, try again later');
    // Raised by the API's own validation or by HTTP itself, never by the SMTP path.
    case 'missing_required_field':
    case 'invalid_parameter':
    case 'invalid_attachment':
    case 'invalid_from_address':
    case 'invalid_access':
    case 'invalid_scheduled_at':
    case 'not_found':
    case 'method_not_allowed':
    case 'payload_too_large':
    case 'uri_too_long':
    case 'headers_too_large':
    case 'request_timeout':
    case 'malformed_request':
    case 'method_not_implemented':
    case 'application_error':
    case 'session_required':
    case 'insufficient_role':
    case 'csrf_token_invalid':
      return null;
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}
