/**
 * Resend's REST timestamp format: Postgres-style `2026-04-03 22:13:42.674981+00`.
 * JavaScript dates carry milliseconds, so the last three digits of the microseconds are 0.
 */
export function restTimestamp(date: Date): string;
export function restTimestamp(date: Date | null | undefined): string | null;
export function restTimestamp(date: Date | null | undefined): string | null {
  if (!date) return null;
  const iso = date.toISOString(); // 2026-04-03T22:13:42.674Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000+00`;
}

/** Webhook payloads use ISO 8601 with `Z`. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
