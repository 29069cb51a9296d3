import { restTimestamp } from '@herald/core';
import { EmailRecord, EmailSummary } from './email.types';

/** Resend's wire shapes for emails. */
export function presentEmailSummary(email: EmailSummary) {
  return {
    id: email.id,
    to: email.to,
    from: email.from,
    created_at: restTimestamp(email.createdAt),
    subject: email.subject,
    bcc: email.bcc,
    cc: email.cc,
    reply_to: email.replyTo,
    last_event: email.lastEvent,
    scheduled_at: restTimestamp(email.scheduledAt),
    message_id: email.messageId,
  };
}

export function presentEmail(email: EmailRecord) {
  return {
    object: 'email' as const,
    ...presentEmailSummary(email),
    html: email.html,
    text: email.text,
    tags: email.tags ?? [],
    headers: email.headers,
    topic_id: null,
  };
}
