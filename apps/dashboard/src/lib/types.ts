// Shapes of the dashboard API (apps/dashboard/CONTRACT.md); only the fields the pages read.
export type Role = 'owner' | 'admin' | 'member';

export interface Team {
  id: string;
  name: string;
  role: Role;
  region: string;
  plan: string;
}

export interface Me {
  user: { id: string; email: string; name: string; email_verified: boolean; two_factor_enabled: boolean };
  teams: Team[];
}

export interface DnsRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  ttl?: string;
  priority?: number;
  status: string;
  observed?: string[] | string | null;
  reason?: string | null;
}

/** Why the reputation guardrail holds a domain's new sends (Herald extension on every domain). */
export interface DomainPause {
  reason: 'bounce_rate' | 'complaint_rate';
  rate: number;
  threshold: number;
  sent: number;
  window_hours: number;
  paused_at: string;
  message: string;
}

export interface Domain {
  id: string;
  name: string;
  status: string;
  region: string;
  created_at: string;
  records?: DnsRecord[];
  paused?: DomainPause | null;
}

/** The counters of GET /stats, per bucket and in `totals`. */
export interface StatsCounts {
  sent: number;
  delivered: number;
  delivery_delayed: number;
  bounced_hard: number;
  bounced_soft: number;
  complained: number;
  suppressed: number;
  failed: number;
  opened_human: number;
  opened_human_unique: number;
  opened_machine: number;
  opened_machine_unique: number;
  clicked_human: number;
  clicked_human_unique: number;
  clicked_machine: number;
  clicked_machine_unique: number;
}

export interface Stats {
  object: 'stats';
  from: string;
  to: string;
  granularity: 'hour' | 'day';
  domain_id: string | null;
  region: string | null;
  totals: StatsCounts & { delivery_rate: number | null; bounce_rate: number | null; complaint_rate: number | null };
  data: (StatsCounts & { timestamp: string })[];
}

export interface EmailSummary {
  id: string;
  from: string;
  to: string[];
  subject: string;
  last_event: string;
  created_at: string;
  domain_id?: string | null;
  api_key_id?: string | null;
}

export interface EmailDetail extends EmailSummary {
  cc?: string[] | null;
  bcc?: string[] | null;
  reply_to?: string[] | null;
  recipients: { email: string; status: string; last_event: string; detail?: string | null }[];
  events: { id: string; type: string; created_at: string; recipient?: string | null; data?: unknown }[];
  html?: string | null;
  text?: string | null;
  headers: { name: string; value: string }[];
}

/** A deliverability finding about an email (GET /emails/:id/insights). */
export interface Insight {
  id: string;
  severity: 'attention' | 'improvement';
  found: string;
  fix: string;
}

export interface ApiKey {
  id: string;
  name: string;
  permission: string;
  domain_id?: string | null;
  created_at: string;
  last_used_at?: string | null;
}

export interface Webhook {
  id: string;
  endpoint: string;
  events: string[];
  status?: string;
  created_at: string;
}

/** An entry of a webhook's delivery log (GET …/webhooks/:id/messages): one event sent to the endpoint. */
export interface WebhookMessage {
  id: string;
  type: string;
  created_at: string;
  status: 'success' | 'pending' | 'failed' | 'attempting' | string;
}

/** One HTTP attempt of a delivery (GET …/messages/:messageId/attempts). */
export interface WebhookAttempt {
  id: string;
  /** Null when no response came (refused, timed out). */
  http_status_code: number | null;
  /** The first KiB of the response, or why there was none. */
  response: string;
  sent_at: string;
}

export interface Suppression {
  id: string;
  email: string;
  /** Why it is listed: a hard bounce, a complaint, or added by hand. */
  origin: 'bounce' | 'complaint' | 'manual' | string;
  created_at: string;
}

export interface Contact {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  created_at: string;
  unsubscribed: boolean;
}

export interface ContactDetail {
  contact: Contact & { properties: Record<string, { type: 'string' | 'number'; value: string | number }> };
  segments: { id: string; name: string; created_at: string }[];
  topics: { id: string; name: string; description: string | null; subscription: 'opt_in' | 'opt_out' }[];
}

export interface Segment {
  id: string;
  name: string;
  created_at: string;
}

export interface ContactImportReport {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  created_at: string;
  completed_at: string | null;
  counts: { total: number; created: number; updated: number; skipped: number; failed: number };
  rejected_rows: { line: number; email: string | null; reason: string }[];
}

export interface Member {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  joined_at: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  created_at: string;
  expires_at?: string;
}

export interface Usage {
  plan: string;
  quota: { monthly: number | null; daily: number | null };
  used: { month: number; today: number };
}

export interface Regions {
  data: string[];
  default: string;
}

/** An entry of the audit log (GET …/audit-log, GET /me/audit-log). */
export interface AuditEntry {
  id: string;
  action: string;
  actor_email: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  detail: Record<string, unknown>;
}

export interface AuditPage {
  data: AuditEntry[];
  has_more: boolean;
}

/** `GET /dashboard/api/sign-in-providers`: the providers this Herald offers. */
export interface SignInProviders {
  data: string[];
}

export type BroadcastStatus = 'draft' | 'scheduled' | 'queued' | 'sending' | 'sent' | 'cancelled';

export interface BroadcastCounts {
  recipients: number;
  skipped_unsubscribed: number;
  skipped_topic: number;
  skipped_suppressed: number;
  delivered: number;
  bounced: number;
  complained: number;
  failed: number;
  suppressed: number;
  opened: number;
  clicked: number;
}

/** The broadcasts contract's object (list items have no html, text or document). */
export interface Broadcast {
  id: string;
  name: string | null;
  segment_id: string | null;
  topic_id: string | null;
  from: string;
  subject: string;
  reply_to: string[] | null;
  preview_text: string | null;
  html?: string | null;
  text?: string | null;
  document?: unknown;
  status: BroadcastStatus;
  created_at: string;
  scheduled_at: string | null;
  sent_at: string | null;
  counts?: Partial<BroadcastCounts>;
}

export interface Segment {
  id: string;
  name: string;
}

export interface Topic {
  id: string;
  name: string;
}

export interface ContactProperty {
  id: string;
  key: string;
  type: string;
  fallback_value: string | number | null;
}

export interface UploadedImage {
  id: string;
  url: string;
}
