import type { ClaimedEmail, EmailOutcome } from '@herald/messages';
import type { MetricsService } from '@herald/observability';
import type { RecipientResult } from '../delivery.types';

/**
 * What the sender pipeline counts: outcomes and latency, and the work a full destination queue
 * costs (recipients claimed and messages built again, deferrals of built messages, emails
 * postponed before any work instead, and called back).
 */
export class DeliveryMetrics {
  private readonly outcomes;
  private readonly latency;
  private readonly claims;
  private readonly builds;
  private readonly queueFull;
  private readonly postponements;
  private readonly claimsLost;

  constructor(metrics: MetricsService) {
    this.outcomes = metrics.counter('herald_delivery_outcomes_total', 'Recipient outcomes recorded by the sender actors', ['outcome']);
    this.latency = metrics.histogram(
      'herald_delivery_latency_seconds',
      'From acceptance (or the scheduled time) to the recipient MX accepting the email',
      [],
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
    );
    this.claims = metrics.counter('herald_delivery_recipient_claims_total', 'Recipients claimed for an attempt: their first claim, or a repeat', [
      'claim',
    ]);
    this.builds = metrics.counter(
      'herald_delivery_message_builds_total',
      'Emails built and DKIM-signed for an attempt: the first time, or again (a recipient had been claimed before)',
      ['build'],
    );
    this.queueFull = metrics.counter(
      'herald_delivery_queue_full_deferrals_total',
      'Recipients claimed and built, then deferred unattempted because their destination queue was full',
    );
    this.postponements = metrics.counter(
      'herald_delivery_postponements_total',
      'Emails postponed unclaimed because a destination of theirs had a full queue, and postponed emails called back once it had room',
      ['step'],
    );
    this.claimsLost = metrics.counter(
      'herald_delivery_claims_lost_total',
      'SMTP transactions not started because the claim on their email had run out (another attempt may hold it)',
    );
  }

  claimed(email: ClaimedEmail): void {
    const repeats = email.recipients.filter((r) => r.attempts > 1).length;
    if (repeats) this.claims.inc({ claim: 'repeat' }, repeats);
    if (email.recipients.length > repeats) this.claims.inc({ claim: 'first' }, email.recipients.length - repeats);
  }

  built(email: ClaimedEmail): void {
    this.builds.inc({ build: email.recipients.some((r) => r.attempts > 1) ? 'repeat' : 'first' });
  }

  transmitted(results: RecipientResult[]): void {
    const full = results.filter((r) => r.outcome.kind === 'deferred' && r.outcome.queueFull).length;
    if (full) this.queueFull.inc(full);
  }

  claimLost(): void {
    this.claimsLost.inc();
  }

  postponed(): void {
    this.postponements.inc({ step: 'postponed' });
  }

  calledBack(emails: number): void {
    this.postponements.inc({ step: 'called_back' }, emails);
  }

  attempted(email: ClaimedEmail, outcome: EmailOutcome): void {
    for (const u of outcome.updates) this.outcomes.inc({ outcome: u.status });
    for (const e of outcome.events) {
      if (e.type === 'email.delivered') this.latency.observe((e.createdAt.getTime() - email.dueAt.getTime()) / 1000);
    }
  }
}
