/** Resend's statuses, with `scheduled`, `sending` and `cancelled`, which Resend's dashboard shows too. */
export type BroadcastStatus = 'draft' | 'scheduled' | 'queued' | 'sending' | 'sent' | 'cancelled';

/** What a broadcast says, as the create and update requests give it. */
export interface BroadcastContent {
  name: string | null;
  segmentId: string | null;
  topicId: string | null;
  /** As given, e.g. `Acme <news@acme.com>`. */
  from: string;
  subject: string;
  replyTo: string[] | null;
  previewText: string | null;
  html: string | null;
  text: string | null;
  /** The editor's document (TipTap JSON), rendered to html and text when it is sent. */
  document: unknown;
}

export interface Broadcast extends BroadcastContent {
  id: string;
  teamId: string;
  status: BroadcastStatus;
  scheduledAt: Date | null;
  sentAt: Date | null;
  createdAt: Date;
  counts: FanOutCounts;
}

/** What the fan-out wrote and left out. */
export interface FanOutCounts {
  recipients: number;
  skippedUnsubscribed: number;
  skippedTopic: number;
  skippedSuppressed: number;
}

/** Each email's last_event among the broadcast's emails. */
export type DeliveryCounts = Record<
  'queued' | 'sent' | 'delivered' | 'delivery_delayed' | 'bounced' | 'complained' | 'failed' | 'suppressed' | 'opened' | 'clicked',
  number
>;
