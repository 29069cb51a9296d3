/**
 * The event types a webhook may subscribe to: Resend's (API.md §9.3) less `email.received` and
 * the `inbox.*` beta, which Herald does not emit.
 */
export const WEBHOOK_EVENT_TYPES = [
  'email.sent',
  'email.scheduled',
  'email.delivered',
  'email.delivery_delayed',
  'email.complained',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.suppressed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.topics.updated',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'suppression.added',
  'suppression.removed',
  'topic.created',
  'topic.updated',
  'topic.deleted',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export type WebhookStatus = 'enabled' | 'disabled';
export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const satisfies readonly WebhookStatus[];

export interface Webhook {
  id: string;
  teamId: string;
  endpoint: string;
  events: WebhookEventType[];
  status: WebhookStatus;
  /** The current `whsec_` secret. */
  signingSecret: string;
  /** The secret before the last rotation, still valid until previousSecretExpiresAt. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  /** Why Herald disabled it (the dispatcher's 410 / 5-day rules); null when a user did, or it is enabled. */
  disabledReason: string | null;
  createdAt: Date;
}
