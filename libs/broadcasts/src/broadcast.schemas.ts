import { z } from 'zod';
import { wireDeleted, wireId, wireList, wireReference, wireTimestamp } from '@herald/http';

/* Resend's wire shapes of broadcasts, with Herald's `document` and `counts`, for /openapi.json (the presenters answer them). */

export { createBroadcastBody, sendBroadcastBody, updateBroadcastBody } from './broadcast-input.validation';
export {
  broadcastClickedLinkListSchema,
  broadcastClickedLinkSchema,
  broadcastRecipientListSchema,
  broadcastRecipientSchema,
} from './broadcast-reports';

const STATUSES = ['draft', 'scheduled', 'queued', 'sending', 'sent', 'cancelled'] as const;
const count = z.int().min(0);

const countsSchema = z
  .object({
    recipients: count.meta({ description: 'Emails the fan-out wrote.' }),
    skipped_unsubscribed: count,
    skipped_topic: count.meta({ description: "Contacts not subscribed to the broadcast's topic." }),
    skipped_suppressed: count.meta({ description: "Addresses on the team's suppression list." }),
    delivered: count,
    bounced: count,
    complained: count,
    failed: count,
    suppressed: count,
    opened: count,
    clicked: count,
  })
  .meta({ description: "Herald's: what the fan-out wrote and left out, and its emails by their `last_event`." });

export const broadcastListItemSchema = z.object({
  object: z.literal('broadcast'),
  id: wireId,
  name: z.string().nullable(),
  segment_id: wireId.nullable(),
  audience_id: wireId.nullable().meta({ description: '`segment_id` under its older name.' }),
  topic_id: wireId.nullable(),
  from: z.string().meta({ example: 'Acme <news@example.com>' }),
  subject: z.string(),
  reply_to: z.array(z.string()).nullable(),
  preview_text: z.string().nullable(),
  status: z.enum(STATUSES),
  created_at: wireTimestamp,
  scheduled_at: wireTimestamp.nullable(),
  sent_at: wireTimestamp.nullable(),
  counts: countsSchema,
});
export const broadcastSchema = z.object({
  ...broadcastListItemSchema.shape,
  html: z.string().nullable().meta({ description: 'Merge tags stay in as `{{{…}}}`; filled for each recipient when sent.' }),
  text: z.string().nullable(),
  document: z
    .record(z.string(), z.unknown())
    .nullable()
    .meta({ description: "Herald's: the editor document, if the broadcast was composed in the dashboard." }),
});
export const broadcastListSchema = wireList(broadcastListItemSchema);
export const broadcastReferenceSchema = wireReference('broadcast');
export const deletedBroadcastSchema = wireDeleted('broadcast');

/** POST /unsubscribe/{token}: RFC 8058's one-click body, or the preference page's own form. */
export const unsubscribeFormSchema = z
  .object({
    'List-Unsubscribe': z
      .literal('One-Click')
      .optional()
      .meta({ description: 'RFC 8058, what mail clients send: unsubscribes at once (so does an empty body).' }),
    action: z
      .enum(['all', 'save'])
      .optional()
      .meta({ description: "The preference page's form: `all` unsubscribes from everything, `save` keeps the checked topics." }),
    topic: z.array(z.string()).optional().meta({ description: 'With `action=save`: the ids of the topics to stay subscribed to (repeated).' }),
  })
  .meta({ example: { 'List-Unsubscribe': 'One-Click' } });
/** The hosted pages: HTML for people (the team's name, the contact's topics), never cached or framed. */
export const unsubscribePageSchema = z.string().meta({ description: 'An HTML page.', example: '<!doctype html><html>…</html>' });
