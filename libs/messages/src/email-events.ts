import { isoTimestamp, stableId } from '@herald/core';

/** Resend's bounce taxonomy (API.md §9.4 and §13). */
export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';
export type BounceSubType =
  | 'General'
  | 'NoEmail'
  | 'Suppressed'
  | 'OnAccountSuppressionList'
  | 'MailboxFull'
  | 'MessageTooLarge'
  | 'ContentRejected'
  | 'AttachmentRejected'
  | 'Undetermined';

/** The `bounce` object of an `email.bounced` event. */
export interface Bounce {
  type: BounceType;
  subType: BounceSubType;
  message: string;
  /** e.g. `["smtp; 550 5.1.1 <x@example.com>: user unknown"]`. */
  diagnosticCode: string[];
}

export type EmailEventType =
  | 'email.scheduled'
  | 'email.sent'
  | 'email.delivered'
  | 'email.delivery_delayed'
  | 'email.bounced'
  | 'email.complained'
  | 'email.failed'
  | 'email.suppressed'
  | 'email.opened'
  | 'email.clicked';

/** The email's `last_event` after an event of this type. */
export const lastEventOf = (type: EmailEventType): string => type.slice('email.'.length);

/** What every email event's data repeats about its email (API.md §9.4). */
export interface EmailFacts {
  id: string;
  teamId: string;
  region: string;
  from: string;
  subject: string;
  messageId: string;
  tags: { name: string; value: string }[] | null;
  headers: Record<string, string> | null;
  createdAt: Date;
}

/** `email.suppressed`'s extra object. */
export interface Suppressed {
  type: 'Suppressed' | 'OnAccountSuppressionList';
  reason: 'previous_bounce' | 'previous_complaint' | 'manual';
  message: string;
  diagnosticCode: string[];
}

/**
 * Herald's extension of `email.delivered` and `email.delivery_delayed` (as SendGrid's `tls` and
 * Mailgun's `delivery-status`): the MX host that answered, whether the session was encrypted, and
 * for a deferral the reply that deferred it.
 */
export interface DeliveryDetails {
  mx: string | null;
  tls?: boolean;
  response?: string;
}

/** Where an open or a click came from (`email.clicked`'s `click` adds the link); Resend's camelCase. */
export interface EngagementSource {
  ipAddress: string;
  userAgent: string;
  /** ISO 8601. */
  timestamp: string;
}

/**
 * Herald's extension of `email.opened` and `email.clicked`: whether a machine made the hit (and
 * how it was told), and whether it is the recipient's first of its class (first human open,
 * first machine open; first click of that link by a human, by a machine).
 */
export interface TrackingFlags {
  machine: boolean;
  reason: 'user_agent' | 'apple_privacy' | 'link_scanner' | null;
  unique: boolean;
}

export type EventExtra =
  | { bounce: Bounce }
  | { failed: { reason: string } }
  | { suppressed: Suppressed }
  | { delivery: DeliveryDetails }
  | { open: EngagementSource; tracking: TrackingFlags }
  | { click: EngagementSource & { link: string }; tracking: TrackingFlags }
  | Record<string, never>;

/** An event as the engine records it: a row of email_events, then a message on the events stream. */
export interface EmailEventRecord {
  id: string;
  emailId: string;
  teamId: string;
  region: string;
  type: EmailEventType;
  /** The recipients the event is about (`data.to`). */
  recipients: string[];
  data: Record<string, unknown>;
  createdAt: Date;
}

/** The seed of an event an email has at most once (`email.sent`, `email.delivery_delayed`). */
export const ONCE_PER_EMAIL = 'once';

/**
 * Builds an email event. `seed` names the occurrence (the claim generation, the report), so the
 * same fact recorded twice keeps one id and is stored once.
 */
export function emailEvent(
  type: EmailEventType,
  email: EmailFacts,
  recipients: string[],
  at: Date,
  seed: string,
  extra: EventExtra = {},
): EmailEventRecord {
  const data: Record<string, unknown> = {
    email_id: email.id,
    created_at: isoTimestamp(email.createdAt),
    from: email.from,
    to: recipients,
    subject: email.subject,
    message_id: email.messageId,
  };
  if (email.tags?.length) data.tags = Object.fromEntries(email.tags.map((t) => [t.name, t.value]));
  if (email.headers && Object.keys(email.headers).length) {
    data.headers = Object.entries(email.headers).map(([name, value]) => ({ name, value }));
  }
  Object.assign(data, extra);
  return {
    id: seed === ONCE_PER_EMAIL ? stableId(email.id, type, seed) : stableId(email.id, type, seed, ...recipients),
    emailId: email.id,
    teamId: email.teamId,
    region: email.region,
    type,
    recipients,
    data,
    createdAt: at,
  };
}
