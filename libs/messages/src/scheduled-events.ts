import type { NewEmail } from './email-record.types';
import { emailEvent, ONCE_PER_EMAIL, type EmailEventRecord } from './email-events';
import { heraldClock } from '@herald/core';

/**
 * `email.scheduled` for each scheduled email among `rows`: recorded in the email's history in
 * the transaction that stores the email (EmailRepository.insert), so a crash cannot keep the
 * email and lose the event, then published to its region's events stream once committed (the
 * outbox relay publishes it if that publish is lost).
 */
export function scheduledEvents(rows: NewEmail[], at: Date = heraldClock.now()): EmailEventRecord[] {
  return rows
    .filter((r) => r.email.scheduledAt)
    .map((r) =>
      emailEvent(
        'email.scheduled',
        {
          id: r.id,
          teamId: r.teamId,
          region: r.region,
          from: r.email.from,
          subject: r.email.subject,
          messageId: r.raw?.messageId ?? `<${r.id}@${r.email.fromDomain}>`,
          tags: r.email.tags,
          headers: r.email.headers,
          createdAt: at,
        },
        r.email.to,
        at,
        ONCE_PER_EMAIL,
      ),
    );
}
