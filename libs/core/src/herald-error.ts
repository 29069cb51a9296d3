/**
 * Every failure a client can see, by its Resend-compatible error name. Libraries throw
 * HeraldError with one of these codes; each transport (HTTP, SMTP, JetStream) maps the code
 * once, in one exhaustive switch.
 */
export type HeraldErrorCode =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'restricted_api_key'
  | 'validation_error'
  | 'forbidden_from_domain'
  /** The reputation guardrail holds the `from` domain's new sends (Herald's own, 403). */
  | 'domain_paused'
  | 'missing_required_field'
  | 'invalid_parameter'
  | 'invalid_attachment'
  | 'invalid_from_address'
  | 'invalid_access'
  | 'invalid_region'
  | 'invalid_scheduled_at'
  | 'invalid_idempotency_key'
  | 'invalid_idempotent_request'
  | 'concurrent_idempotent_requests'
  | 'not_found'
  // The dashboard's session and roles.
  | 'session_required'
  | 'insufficient_role'
  | 'csrf_token_invalid'
  | 'method_not_allowed'
  | 'daily_quota_exceeded'
  | 'monthly_quota_exceeded'
  /** A broadcast would send more emails than the team's plan has left (Resend's 403 `validation_error`). */
  | 'quota_reached'
  | 'rate_limit_exceeded'
  | 'payload_too_large'
  // Failures of the HTTP request itself, answered before any route runs.
  | 'uri_too_long'
  | 'headers_too_large'
  | 'request_timeout'
  | 'malformed_request'
  | 'method_not_implemented'
  | 'service_unavailable'
  | 'application_error';

export class HeraldError extends Error {
  constructor(
    readonly code: HeraldErrorCode,
    message: string,
    /** Seconds until the client may retry (rate limits and quotas). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'HeraldError';
  }
}

export const isHeraldError = (e: unknown): e is HeraldError => e instanceof HeraldError;
