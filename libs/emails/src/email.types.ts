import type { PlanId } from '@herald/limits';

/** `last_event` values of an email, as Resend names them. */
export type EmailEvent =
  | 'queued'
  | 'scheduled'
  | 'canceled'
  | 'sent'
  | 'delivered'
  | 'delivery_delayed'
  | 'bounced'
  | 'complained'
  | 'opened'
  | 'clicked'
  | 'failed'
  | 'suppressed';

export type EmailSource = 'api' | 'smtp';

/** An email as stored: the record of what the customer handed over. */
export interface EmailRecord {
  id: string;
  teamId: string;
  region: string;
  source: EmailSource;
  from: string;
  to: string[];
  cc: string[] | null;
  bcc: string[] | null;
  replyTo: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  tags: { name: string; value: string }[] | null;
  messageId: string;
  lastEvent: EmailEvent;
  scheduledAt: Date | null;
  createdAt: Date;
}

export type EmailSummary = Omit<EmailRecord, 'html' | 'text' | 'tags' | 'headers'>;

/** Who is sending: the authenticated team, as the send path needs it. */
export interface Sender {
  teamId: string;
  plan: PlanId;
  homeRegion: string;
  /** A key restricted to one sending domain (`sending_access` with `domain_id`). */
  restrictedDomainId: string | null;
}
