import { heraldBounce } from '../bounce-classification';
import type { Bounce, RecipientResult } from '../delivery.types';
import {
  emailEvent,
  ONCE_PER_EMAIL,
  type ClaimedEmail,
  type ClaimedRecipient,
  type DeliveryDetails,
  type EmailEventRecord,
  type EmailEventType,
  type EmailOutcome,
  type EventExtra,
  type RecipientUpdate,
  type Suppressed,
} from '@herald/messages';
import { nextAttemptAt, type RetryPolicy } from './retry-policy';
import { TEST_ADDRESS_MX, type TestAddressOutcome } from './test-addresses';
import { heraldClock } from '@herald/core';

/** A recipient given back unstarted (the worker is stopping) is tried again this soon, unless told when. */
const NOT_ATTEMPTED_RETRY_MS = 5_000;

/** Events of one outcome in the order their timestamps follow; `last_event` is the latest. */
const EVENT_ORDER: EmailEventType[] = [
  'email.suppressed',
  'email.failed',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
];

type Pending = { type: EmailEventType; recipients: string[]; extra: EventExtra; seed: string };

/**
 * Turns what happened to each claimed recipient into recipient updates and events. Retries and
 * expiry are decided here: a deferral past the retry window becomes a Transient bounce, and
 * `email.delivery_delayed` is announced once per email (its id is the same at every deferral, so
 * the events table keeps the first).
 */
export class OutcomeCollector {
  private readonly updates: RecipientUpdate[] = [];
  private readonly pending: Pending[] = [];
  private readonly byAddress: Map<string, ClaimedRecipient>;
  private readonly now = heraldClock.now();

  constructor(
    private readonly email: ClaimedEmail,
    private readonly retry: RetryPolicy,
  ) {
    this.byAddress = new Map(email.recipients.map((r) => [r.address.toLowerCase(), r]));
  }

  suppressed(r: ClaimedRecipient, reason: Suppressed['reason']): void {
    this.update(r, 'suppressed', 'not sent: the address is on the suppression list', null);
    const message =
      reason === 'previous_complaint'
        ? 'The recipient marked an earlier email as spam, so Herald did not send to this address.'
        : reason === 'previous_bounce'
          ? 'An earlier email to this address hard-bounced, so Herald did not send to it.'
          : 'The address is on the suppression list, so Herald did not send to it.';
    this.event('email.suppressed', [r.address], { suppressed: { type: 'OnAccountSuppressionList', reason, message, diagnosticCode: [] } });
  }

  testAddress(r: ClaimedRecipient, outcome: Exclude<TestAddressOutcome, { kind: 'suppressed' }>): void {
    switch (outcome.kind) {
      case 'delivered':
      case 'complained':
        this.update(r, 'delivered', '250 2.0.0 OK (test address)', TEST_ADDRESS_MX);
        this.event('email.delivered', [r.address]);
        if (outcome.kind === 'complained') this.event('email.complained', [r.address]);
        return;
      case 'bounced':
        this.bounced(r, outcome.bounce, TEST_ADDRESS_MX);
        return;
      default: {
        const unhandled: never = outcome;
        throw new Error(`unknown test outcome ${JSON.stringify(unhandled)}`);
      }
    }
  }

  failed(recipients: ClaimedRecipient[], reason: string, message: string): void {
    for (const r of recipients) this.update(r, 'failed', message, null);
    this.event(
      'email.failed',
      recipients.map((r) => r.address),
      { failed: { reason } },
    );
  }

  deferredAll(recipients: ClaimedRecipient[], response: string): void {
    for (const r of recipients) this.deferred(r, response, null);
  }

  /** The results of one SMTP transaction (one recipient domain). */
  transmitted(results: RecipientResult[]): void {
    const delivered: string[] = [];
    let delivery: DeliveryDetails | null = null;
    for (const { recipient, outcome } of results) {
      const r = this.byAddress.get(recipient.toLowerCase());
      if (!r) continue;
      switch (outcome.kind) {
        case 'delivered':
          this.update(r, 'delivered', outcome.response, outcome.mx);
          delivered.push(r.address);
          delivery = { mx: outcome.mx, tls: outcome.tls };
          break;
        case 'bounced':
          this.bounced(r, outcome.bounce, outcome.mx);
          break;
        case 'deferred':
          if (outcome.notAttempted) {
            this.update(r, 'deferred', outcome.response, null, outcome.notBefore ?? new Date(this.now.getTime() + NOT_ATTEMPTED_RETRY_MS));
          } else this.deferred(r, outcome.response, outcome.mx, outcome.notBefore);
          break;
        default: {
          const unhandled: never = outcome;
          throw new Error(`unknown outcome ${JSON.stringify(unhandled)}`);
        }
      }
    }
    if (delivered.length) this.event('email.delivered', delivered, delivery ? { delivery } : {});
  }

  finish(): EmailOutcome {
    const at = heraldClock.nowMs();
    const ordered = [...this.pending].sort((a, b) => EVENT_ORDER.indexOf(a.type) - EVENT_ORDER.indexOf(b.type));
    const events: EmailEventRecord[] = ordered.map((p, i) => emailEvent(p.type, this.email, p.recipients, new Date(at + i), p.seed, p.extra));
    return { emailId: this.email.id, token: this.email.token, updates: this.updates, events };
  }

  private deferred(r: ClaimedRecipient, response: string, mx: string | null, notBefore?: Date): void {
    const next = nextAttemptAt(this.retry, r.attempts, this.email.dueAt, this.now, notBefore);
    if (!next) {
      const hours = Math.round(((this.now.getTime() - this.email.dueAt.getTime()) / 3_600_000) * 10) / 10;
      const bounce = heraldBounce(
        'Transient',
        'General',
        `Herald could not deliver the email within ${hours} h (${r.attempts} attempts).`,
        `smtp; ${response}`,
      );
      return this.bounced(r, bounce, mx);
    }
    this.update(r, 'deferred', response, mx, next);
    // The same id at every deferral: the email announces its delay once.
    this.event('email.delivery_delayed', [r.address], { delivery: { mx, response } }, ONCE_PER_EMAIL);
  }

  private bounced(r: ClaimedRecipient, bounce: Bounce, mx: string | null): void {
    this.update(r, 'bounced', bounce.diagnosticCode[0] ?? bounce.message, mx);
    this.event('email.bounced', [r.address], { bounce });
  }

  private update(r: ClaimedRecipient, status: RecipientUpdate['status'], response: string | null, mx: string | null, next: Date | null = null): void {
    this.updates.push({ position: r.position, status, response, mx, nextAttemptAt: next });
  }

  private event(type: EmailEventType, recipients: string[], extra: EventExtra = {}, seed = String(this.email.generation)): void {
    if (type === 'email.delivery_delayed') {
      const existing = this.pending.find((p) => p.type === type);
      if (existing) return void existing.recipients.push(...recipients);
    }
    this.pending.push({ type, recipients, extra, seed });
  }
}
