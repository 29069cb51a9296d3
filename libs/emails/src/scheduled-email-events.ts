import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EmailEventRecord, EmailEventsRepository, emailEvent, EventOutbox, ONCE_PER_EMAIL } from '@herald/delivery';
import type { NewEmail } from './email.repository';

/**
 * `email.scheduled` for each scheduled email the send path stores: recorded in the email's
 * history in the transaction that stores the email (EmailRepository.insert), so a crash cannot
 * keep the email and lose the event, then published to its region's events stream once
 * committed (the outbox relay publishes it if this publish is lost).
 */
@Injectable()
export class ScheduledEmailEvents {
  constructor(
    private readonly events: EmailEventsRepository,
    private readonly outbox: EventOutbox,
  ) {}

  /** Records the events of the scheduled ones among `rows` in the caller's transaction; returns those recorded now. */
  record(m: EntityManager, rows: NewEmail[], at: Date = new Date()): Promise<EmailEventRecord[]> {
    const scheduled = rows.filter((r) => r.email.scheduledAt);
    if (!scheduled.length) return Promise.resolve([]);
    const records = scheduled.map((r) =>
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
    return this.events.insert(m, records);
  }

  /** After the commit: publishes recorded events (never throws; the relay covers a failure). */
  publish(records: EmailEventRecord[]): void {
    this.outbox.publish(records);
  }
}
