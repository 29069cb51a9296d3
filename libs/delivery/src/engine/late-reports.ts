import { Inject, Injectable, Logger } from '@nestjs/common';
import { emailEvent, EmailEventOutbox, EmailStore, type EmailEventRecord, type LateStatus } from '@herald/messages';
import { SuppressionsService } from '@herald/suppressions';
import { bounceOfDsnRecipient, type ParsedReport } from '../bounce';
import { isHardBounce } from '../bounce-classification';
import type { Bounce } from '../delivery.types';
import { testAddressOutcome } from './test-addresses';
import { DELIVERY_CONFIG, DeliveryConfig } from '../delivery.config';
import { heraldClock } from '@herald/core';

/** A report that arrived at the bounce MX (@herald/smtp) for one of our emails. */
export interface ReceivedReport {
  /** From the verified VERP recipient address. */
  emailId: string;
  report: ParsedReport;
  /** MAIL FROM, usually empty (the null sender) for DSNs. */
  envelopeFrom: string;
  remoteAddress: string;
}

/**
 * Bounces and complaints that arrive after delivery, at the bounce MX: a DSN from a server that
 * accepted the email and then could not deliver it, or a feedback-loop complaint. Each becomes
 * `email.bounced` or `email.complained` for the right recipient, and a hard bounce or a
 * complaint suppresses the address. Event ids derive from the email, recipient and kind, so a
 * report sent twice is recorded once.
 */
@Injectable()
export class LateReports {
  private readonly logger = new Logger(LateReports.name);

  constructor(
    @Inject(DELIVERY_CONFIG.token) private readonly config: DeliveryConfig,
    private readonly store: EmailStore,
    private readonly outbox: EmailEventOutbox,
    private readonly suppressions: SuppressionsService,
  ) {}

  async record({ emailId, report }: ReceivedReport): Promise<void> {
    const email = await this.store.emailForReport(emailId);
    if (!email) {
      this.logger.warn(`a ${report.kind} arrived for email ${emailId}, which no longer exists; ignored`);
      return;
    }
    // Many reports hide the recipient; an email to one recipient leaves no doubt.
    const only = email.recipients.length === 1 ? email.recipients[0] : null;
    const match = (...candidates: (string | null)[]): string | null =>
      candidates.map((c) => email.recipients.find((r) => r.toLowerCase() === c?.toLowerCase())).find((r) => r !== undefined) ?? only;
    const now = heraldClock.now();
    const events: EmailEventRecord[] = [];
    const statuses: LateStatus[] = [];
    const suppress: { address: string; origin: 'bounce' | 'complaint'; reason: string }[] = [];

    if (report.kind === 'dsn') {
      for (const r of report.recipients) {
        const bounce: Bounce | null = bounceOfDsnRecipient(r);
        const address = match(r.recipient);
        if (!bounce || !address) continue;
        events.push(emailEvent('email.bounced', email, [address], now, 'dsn', { bounce }));
        statuses.push({ emailId, address, status: 'bounced' });
        if (isHardBounce(bounce)) suppress.push({ address, origin: 'bounce', reason: bounce.message });
      }
    } else {
      const address = match(report.recipient, ...report.originalTo);
      if (address) {
        events.push(emailEvent('email.complained', email, [address], now, 'complaint'));
        suppress.push({ address, origin: 'complaint', reason: `The recipient reported the email as ${report.feedbackType}.` });
      }
    }
    if (!events.length) {
      this.logger.warn(`a ${report.kind} for email ${emailId} named no recipient of it; ignored`);
      return;
    }
    const fresh = await this.store.recordLate(events, statuses);
    for (const s of suppress) {
      if (testAddressOutcome(s.address, this.config.TEST_ADDRESS_DOMAINS)) continue;
      await this.suppressions.suppress(email.teamId, s.address, s.origin, emailId, s.reason);
    }
    this.outbox.publish(fresh);
  }
}
