import { restTimestamp } from '@herald/core';
import type { Broadcast, DeliveryCounts } from './broadcast.types';

/** Resend's broadcast object, with Herald's `document` and `counts`. */
export function presentBroadcast(b: Broadcast, delivery: Partial<DeliveryCounts> = {}) {
  return { ...presentSummary(b, delivery), html: b.html, text: b.text, document: b.document ?? null };
}

/** A list item: the object without its bodies. */
export function presentSummary(b: Broadcast, delivery: Partial<DeliveryCounts> = {}) {
  return {
    object: 'broadcast' as const,
    id: b.id,
    name: b.name,
    segment_id: b.segmentId,
    audience_id: b.segmentId,
    topic_id: b.topicId,
    from: b.from,
    subject: b.subject,
    reply_to: b.replyTo,
    preview_text: b.previewText,
    status: b.status,
    created_at: restTimestamp(b.createdAt),
    scheduled_at: restTimestamp(b.scheduledAt),
    sent_at: restTimestamp(b.sentAt),
    counts: {
      recipients: b.counts.recipients,
      skipped_unsubscribed: b.counts.skippedUnsubscribed,
      skipped_topic: b.counts.skippedTopic,
      skipped_suppressed: b.counts.skippedSuppressed,
      delivered: delivery.delivered ?? 0,
      bounced: delivery.bounced ?? 0,
      complained: delivery.complained ?? 0,
      failed: delivery.failed ?? 0,
      suppressed: delivery.suppressed ?? 0,
      opened: delivery.opened ?? 0,
      clicked: delivery.clicked ?? 0,
    },
  };
}

export type BroadcastBody = ReturnType<typeof presentBroadcast>;

export function presentBroadcastList(page: { items: Broadcast[]; hasMore: boolean }) {
  return { object: 'list' as const, has_more: page.hasMore, data: page.items.map((b) => presentSummary(b)) };
}

export const broadcastRef = (id: string) => ({ object: 'broadcast' as const, id });
