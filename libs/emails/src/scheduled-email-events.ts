import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailEventsRepository, emailEvent, EventOutbox, ONCE_PER_EMAIL } from '@herald/delivery';
import type { NewEmail } from './email.repository';

/**
 * `email.scheduled` for each scheduled email the send path has just committed: recorded in the
 * email's history and published to its region's events stream (the outbox relays it if this
 * publish is lost). Best effort after the commit: the emails stand whatever happens here, and a
 * crash between the commit and this insert loses the event (the email is still sent when due).
 */
@Injectable()
export class ScheduledEmailEvents {
  private readonly logger = new Logger(ScheduledEmailEvents.name);

  constructor(
    private readonly db: DataSource,
    private readonly events: EmailEventsRepository,
    private readonly outbox: EventOutbox,
  ) {}

  async announce(rows: NewEmail[], at: Date = new Date()): Promise<void> {
    const scheduled = rows.filter((r) => r.email.scheduledAt);
    if (!scheduled.length) return;
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
    try {
      this.outbox.publish(await this.events.insert(this.db.manager, records));
    } catch (error) {
      this.logger.error(`could not record email.scheduled for ${records.length} email(s): ${(error as Error).message}`);
    }
  }
}
