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
  disabled: 'gray',
  not_linked: 'gray',
  missing: 'red',
  mismatch: 'red',
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
