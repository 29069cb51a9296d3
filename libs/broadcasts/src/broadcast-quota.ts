import { Injectable, Logger } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { ContactsDirectory } from '@herald/contacts';
import { HeraldError } from '@herald/core';
import { isPlanId, QuotaService, type PlanId, type Reservation } from '@herald/limits';
import { EmailStore } from '@herald/messages';
import { isRedisUnavailable } from '@herald/redis';

/**
 * The team's plan quota for broadcasts, counted like the batch API's (one per recipient, the same
 * Redis counters). A send is refused up front when the segment would take the team past what
 * its plan has left today or this month (Resend's 403 `validation_error`); the fan-out then
 * reserves each chunk's emails before it writes them, so that sends racing the broadcast cannot
 * take the team past its cap either.
 */
@Injectable()
export class BroadcastQuota {
  private readonly logger = new Logger(BroadcastQuota.name);

  constructor(
    private readonly teams: TeamsService,
    private readonly contacts: ContactsDirectory,
    private readonly quota: QuotaService,
    private readonly emails: EmailStore,
  ) {}

  async plan(teamId: string): Promise<PlanId> {
    const { plan } = await this.teams.get(teamId);
    return isPlanId(plan) ? plan : 'free';
  }

  /** Throws `quota_reached` when the broadcast's recipients (suppressions aside) exceed what the plan has left. */
  async checkSend(teamId: string, broadcast: { segmentId: string | null; topicId: string | null }): Promise<void> {
    if (!broadcast.segmentId) return;
    const [plan, recipients] = await Promise.all([this.plan(teamId), this.contacts.countSendable(teamId, broadcast.segmentId, broadcast.topicId)]);
    let usage;
    try {
      usage = await this.quota.usage(teamId, plan);
    } catch (error) {
      // Without Redis the fan-out's reservations still hold the line.
      if (isRedisUnavailable(error)) return;
      throw error;
    }
    const monthLeft = usage.monthly.limit - usage.monthly.used;
    const dayLeft = usage.daily.limit === null ? Infinity : usage.daily.limit - usage.daily.used;
    const left = Math.max(0, Math.min(monthLeft, dayLeft));
    if (recipients <= left) return;
    const period = dayLeft < monthLeft ? 'today' : 'this month';
    throw new HeraldError(
      'quota_reached',
      `Contacts quota reached: this broadcast would send ${recipients} emails, and the team's plan allows ${left} more ${period}.`,
    );
  }

  /** Reserves a chunk's emails; the caller releases those it does not write. */
  reserve(teamId: string, plan: PlanId, count: number): Promise<Reservation> {
    const backstop = (monthStart: Date, dayStart: Date) => this.emails.recipientsAcceptedSince(teamId, monthStart, dayStart);
    return this.quota.reserve(teamId, plan, count, new Date(), backstop);
  }

  /** Gives back `count` of the reservation's emails (all of them unless told). */
  async release(teamId: string, reservation: Reservation, count = reservation.count): Promise<void> {
    await this.quota
      .release(teamId, { ...reservation, count })
      .catch((error: Error) => this.logger.warn(`broadcast quota refund failed: ${error.message}`));
  }
}

/** A chunk the quota refused: the fan-out waits until the period resets. */
export const isQuotaExceeded = (error: unknown): error is HeraldError =>
  error instanceof HeraldError && (error.code === 'daily_quota_exceeded' || error.code === 'monthly_quota_exceeded');
