const dateTime = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : dateTime.format(date);
}

export type Tone = 'green' | 'red' | 'yellow' | 'blue' | 'gray' | 'orange' | 'violet';

const TONES: Record<string, Tone> = {
  verified: 'green',
  delivered: 'green',
  active: 'green',
  enabled: 'green',
  linked: 'green',
  succeeded: 'green',
  success: 'green',
  ok: 'green',
  opened: 'blue',
  clicked: 'violet',
  sent: 'blue',
  queued: 'gray',
  scheduled: 'gray',
  pending: 'yellow',
  not_started: 'gray',
  temporary_failure: 'orange',
  delivery_delayed: 'orange',
  deferred: 'orange',
  retrying: 'orange',
  partially_verified: 'orange',
  failed: 'red',
  paused: 'red',
  bounced: 'red',
  complained: 'red',
  suppressed: 'red',
  canceled: 'gray',
  cancelled: 'gray',
  draft: 'yellow',
  sending: 'blue',
  disabled: 'gray',
  not_linked: 'gray',
  missing: 'red',
  mismatch: 'red',
  bounce: 'red',
  complaint: 'red',
  manual: 'gray',
  subscribed: 'green',
  unsubscribed: 'red',
  opted_out: 'gray',
  completed: 'green',
  in_progress: 'yellow',
};

/** A status's badge colour; the badge always shows the status's words too, colour is never alone. */
export function toneOf(status: string | null | undefined): Tone {
  return (status && TONES[status.toLowerCase()]) || 'gray';
}

export function statusLabel(status: string | null | undefined): string {
  if (!status) return 'unknown';
  return status.replace(/_/g, ' ');
}

/** `used` of `quota` as a percentage for a progress bar, 0 when there is no quota. */
export function usagePercent(used: number, quota: number | null | undefined): number {
  if (!quota || quota <= 0) return 0;
  return Math.min(100, Math.round((used / quota) * 1000) / 10);
}

/** The value DNS answered for a record, as one line for the table. */
export function observedText(observed: string[] | string | null | undefined): string {
  if (observed === null || observed === undefined) return 'nothing yet';
  const values = Array.isArray(observed) ? observed : [observed];
  return values.length ? values.join(' · ') : 'no record';
}

/** A `yyyy-mm-dd` from a date input as the ISO instant that starts (or, with `end`, ends) that day in the browser's zone. */
export function dayBound(day: string, end = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const date = new Date(`${day}T00:00:00`);
  if (Number.isNaN(date.getTime())) return undefined;
  if (end) date.setDate(date.getDate() + 1);
  return date.toISOString();
}

const BROWSERS: [RegExp, string][] = [
  [/Edg\/(\d+)/, 'Edge'],
  [/OPR\/(\d+)/, 'Opera'],
  [/Firefox\/(\d+)/, 'Firefox'],
  [/Chrome\/(\d+)/, 'Chrome'],
  [/Version\/(\d+)[\d.]*(?: Mobile\/\S+)? Safari/, 'Safari'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad/, 'iOS'],
  [/Mac OS X/, 'macOS'],
  [/Windows/, 'Windows'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** A session's user agent as a person names the device ("Chrome 156 on Linux"); anything else as it came, shortened. */
export function deviceName(userAgent: string | null | undefined): string {
  const agent = userAgent?.trim();
  if (!agent) return 'Unknown device';
  const browser = BROWSERS.map(([pattern, name]) => [pattern.exec(agent)?.[1], name] as const).find(([version]) => version);
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1];
  if (browser) return `${browser[1]} ${browser[0]}${system ? ` on ${system}` : ''}`;
  return agent.length > 48 ? `${agent.slice(0, 47)}…` : agent;
}

const ACTIONS: Record<string, string> = {
  'user.signed_in': 'Signed in',
  'password.changed': 'Changed the password',
  'mfa.totp_enabling': 'Started setting up an authenticator app',
  'mfa.totp_verified': 'Confirmed an authenticator app code',
  'mfa.totp_disabled': 'Turned off two-factor authentication',
  'mfa.backup_codes_generated': 'Made new recovery codes',
  'mfa.passkey_added': 'Added a passkey',
  'mfa.passkey_deleted': 'Deleted a passkey',
  'account.linking': 'Linked a sign-in provider',
  'account.unlinked': 'Unlinked a sign-in provider',
  'session.revoked': 'Revoked a session',
  'session.revoked_others': 'Revoked all other sessions',
  'team.created': 'Created the team',
  'api_key.created': 'Created an API key',
  'api_key.revoked': 'Revoked an API key',
  'invitation.created': 'Invited someone',
  'invitation.revoked': 'Revoked an invitation',
  'member.joined': 'Joined the team',
  'member.role_changed': 'Changed a member’s role',
  'member.removed': 'Removed a member',
};

/** The details of an audit entry a person reads ("name: Production · permission: full access"); ids are left out. */
export function auditDetail(detail: Record<string, unknown> | null | undefined): string {
  return Object.entries(detail ?? {})
    .filter(([key, value]) => key !== 'path' && !key.endsWith('_id') && (typeof value === 'string' || typeof value === 'number') && value !== '')
    .map(([key, value]) => `${key.replace(/_/g, ' ')}: ${String(value).replace(/_/g, ' ')}`)
    .join(' · ');
}

/** An audit log action in words ("api_key.created" → "Created an API key"); an action the page does not know, as it came. */
export function auditAction(action: string): string {
  return ACTIONS[action] ?? action;
}

/**
 * A broadcast's subject as a list shows it: each merge tag (`{{{contact.first_name|friend}}}`) as
 * the field it stands for in angle quotes (`‹first name›`), since each recipient sees their own value.
 */
export function readableSubject(subject: string): string {
  return subject.replace(
    /\{\{\{\s*([^}|]+?)\s*(?:\|[^}]*)?\}\}\}/g,
    (_, key: string) =>
      `‹${key
        .replace(/^contact\./i, '')
        .replace(/_/g, ' ')
        .toLowerCase()}›`,
  );
}
