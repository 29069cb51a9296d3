/**
 * Which database each table belongs in once regions hold their own email plane (issue 15, README
 * "Regions"): the control plane is one global database (`CONTROL_DATABASE_URL`), the email plane
 * is each region's (`REGION_DATABASE_URLS`). Every table the migrations create is named in exactly
 * one list (test/lint/plane-census.spec.ts checks it), so a new table comes with that decision.
 *
 * The email plane is what an email becomes: its rows, its body, its events and outbox, the webhook
 * messages its events make, and the rows written in the same transaction as an email (a
 * broadcast's per-contact ledger, a broadcast's body template, a keyed request's idempotency
 * record), which must share its database for exactly-once to hold. The rest is the control plane: who may send, from where, to
 * whom, and the team-wide figures built from every region's events.
 */
export const EMAIL_PLANE_TABLES = [
  'emails',
  'email_recipients',
  'email_attachments',
  'email_mime',
  'email_mime_uploads',
  'email_events',
  'email_dispatches',
  'email_templates',
  'email_engagement_firsts',
  'email_insights',
  'webhook_messages',
  'webhook_attempts',
  'broadcast_recipients',
  'idempotency_records',
] as const;

export const CONTROL_PLANE_TABLES = [
  'teams',
  'team_members',
  'team_invitations',
  'users',
  'user_accounts',
  'user_sessions',
  'user_verifications',
  'user_two_factors',
  'user_passkeys',
  'audit_log',
  'api_keys',
  'domains',
  'dkim_keys',
  'webhooks',
  'suppressions',
  'contacts',
  'contact_properties',
  'contact_topics',
  'contact_imports',
  'contact_import_chunks',
  'segments',
  'segment_contacts',
  'topics',
  'broadcasts',
  'editor_images',
  'resource_events',
  'metric_rollups',
  'counted_events',
] as const;

export type Plane = 'email' | 'control';

/** The plane of a table, or null for a table neither list names. */
export function planeOf(table: string): Plane | null {
  if ((EMAIL_PLANE_TABLES as readonly string[]).includes(table)) return 'email';
  if ((CONTROL_PLANE_TABLES as readonly string[]).includes(table)) return 'control';
  return null;
}
