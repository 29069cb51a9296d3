/**
 * The vocabulary of the delivery engine. Outcomes are values: a transmission never throws, it
 * says per recipient what happened, and the engine records that.
 */

import type { Bounce } from '@herald/messages';

export type { Bounce, BounceSubType, BounceType } from '@herald/messages';

/** What one attempt (or a later report) says about one recipient. */
export type RecipientOutcome =
  /** `tls`: the session was encrypted (STARTTLS); false when the server offered none and the message went in the clear. */
  | { kind: 'delivered'; response: string; mx: string; tls: boolean }
  /** Try again later: 4xx, timeouts, refused or dropped connections, DNS failures. */
  | {
      kind: 'deferred';
      response: string;
      mx: string | null;
      /** Not to be tried again before this: the destination's back-off, or when its full queue will have drained. */
      notBefore?: Date;
      /** The job was handed back unstarted (shutdown, a full destination queue): no delay is announced. */
      notAttempted?: true;
      /** Handed back because the destination's queue was full (the work of building it was wasted). */
      queueFull?: true;
    }
  /** The receiving side refused for good (5xx, null MX, no such domain). */
  | { kind: 'bounced'; bounce: Bounce; mx: string | null };

export interface RecipientResult {
  /** The recipient's address, as the email lists it (bare `local@domain`). */
  recipient: string;
  outcome: RecipientOutcome;
}

/** One SMTP transaction's worth of work: every recipient of one email at one domain. */
export interface DeliveryJob {
  /** For logs and metrics. */
  emailId: string;
  /** Recipient domain, lowercased (IDNs in their A-label form). */
  domain: string;
  /** Bare addresses, all at `domain`. */
  recipients: string[];
  /** The MAIL FROM (VERP Return-Path). */
  envelopeFrom: string;
  /** The whole message, DKIM-signed, CRLF line endings. */
  message: Buffer;
  /** The sending domain's `tls` is `enforced`: no STARTTLS offered means deferred, never plaintext. */
  requireTls: boolean;
  /**
   * Asked once a connection is ready, right before the transaction: whether the email is still
   * this worker's to send. False (its claim ran out while the job waited, and another attempt may
   * have taken it over) hands the job back unsent.
   */
  held?: () => Promise<boolean>;
}

/** Whether an email may be claimed now, or waits its turn (about `expectedWaitMs`) on a destination's waitlist. */
export type Admission = { kind: 'admitted' } | { kind: 'waitlisted'; expectedWaitMs: number };

/** Sends jobs to recipients' MX hosts. Never rejects: every recipient of the job gets one result. */
export interface Transmitter {
  /**
   * `waiting` is called if the job has to wait for its destination (every connection busy, or
   * the probe of a destination leaving its back-off still out): the destination's own bounded
   * queue holds it from then on, so the caller can stop counting it against its concurrency.
   */
  deliver(job: DeliveryJob, waiting?: () => void): Promise<RecipientResult[]>;
  /**
   * Admission before an email is claimed and built, from the domains its send command names:
   * holds a place for its jobs in each destination's queue, or, one of them being full, puts
   * the email on that destination's waitlist: the `onRoom` listener is given it back once there
   * is room. The places are taken by the email's jobs as they arrive; `release` gives back the
   * ones it did not use. An email `called` back (by any worker) is admitted.
   */
  admit?(emailId: string, domains: string[], called?: boolean): Promise<Admission>;
  release?(emailId: string): void;
  onRoom?(listener: (emailIds: string[]) => void): void;
}
