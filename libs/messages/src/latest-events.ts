import type { EmailEventRecord } from './email-events';

/** Each email's latest event (the last of equals). */
export function latestEvents(events: EmailEventRecord[]): Map<string, EmailEventRecord> {
  const latest = new Map<string, EmailEventRecord>();
  for (const e of events) {
    const seen = latest.get(e.emailId);
    if (!seen || seen.createdAt.getTime() <= e.createdAt.getTime()) latest.set(e.emailId, e);
  }
  return latest;
}
