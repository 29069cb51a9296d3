import { z } from 'zod';
import { HeraldError, parseAddress } from '@herald/core';
import { isPlainObject, pageQuerySchema, parseOrThrow, wireId, wireList, type CursorKind, type PageRequest } from '@herald/http';
import type { BroadcastEmailHit } from '@herald/messages';

/*
 * GET /broadcasts/:id/recipients and GET /broadcasts/:id/clicked-links: their queries, and
 * the shapes the `resend` SDK reads (`BroadcastRecipient`, `BroadcastClickedLink`).
 */

export const RECIPIENT_TYPES = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'suppressed'] as const;
export type RecipientType = (typeof RECIPIENT_TYPES)[number];
export const BOUNCE_TYPES = ['permanent', 'transient', 'undetermined'] as const;
export type RecipientBounceType = (typeof BOUNCE_TYPES)[number];

export interface RecipientsQuery {
  type: RecipientType;
  email: string | null;
  bounceType: RecipientBounceType | null;
  page: PageRequest;
}

const oneOf = (name: string, values: readonly string[]) => `The \`${name}\` parameter must be one of ${values.map((v) => `\`${v}\``).join(', ')}.`;

/** `type` (required), `email`, `bounce_type` (with `type=bounced` only), and the page. */
export function validateRecipientsQuery(query: unknown): RecipientsQuery {
  const q = isPlainObject(query) ? query : {};
  const type = q['type'];
  if (type === undefined || type === '') throw new HeraldError('missing_required_field', 'The `type` parameter is required.');
  if (typeof type !== 'string' || !(RECIPIENT_TYPES as readonly string[]).includes(type)) {
    throw new HeraldError('validation_error', oneOf('type', RECIPIENT_TYPES));
  }
  const email = q['email'];
  let address: string | null = null;
  if (email !== undefined && email !== '') {
    const parsed = typeof email === 'string' ? parseAddress(email) : null;
    if (!parsed || parsed.display !== null) throw new HeraldError('validation_error', 'The `email` parameter must be an email address.');
    address = parsed.address.toLowerCase();
  }
  const bounce = q['bounce_type'];
  let bounceType: RecipientBounceType | null = null;
  if (bounce !== undefined && bounce !== '') {
    if (type !== 'bounced') throw new HeraldError('validation_error', 'The `bounce_type` parameter can only be used with `type=bounced`.');
    if (typeof bounce !== 'string' || !(BOUNCE_TYPES as readonly string[]).includes(bounce)) {
      throw new HeraldError('validation_error', oneOf('bounce_type', BOUNCE_TYPES));
    }
    bounceType = bounce as RecipientBounceType;
  }
  const { type: _t, email: _e, bounce_type: _b, ...rest } = q;
  return { type: type as RecipientType, email: address, bounceType, page: parseOrThrow(pageQuerySchema(), rest) as PageRequest };
}

/** A clicked link's `id`: the URL, base64url-encoded, so that a page can start after it. */
export const LINK_CURSOR: CursorKind = {
  valid: (value) => /^[A-Za-z0-9_-]+$/.test(value) && Buffer.from(value, 'base64url').toString('utf8').length > 0,
  described: 'the `id` of a link of this list',
  normalize: (value) => Buffer.from(value, 'base64url').toString('utf8'),
};
export const linkId = (url: string): string => Buffer.from(url, 'utf8').toString('base64url');

export function validateClickedLinksQuery(query: unknown): PageRequest {
  return parseOrThrow(pageQuerySchema({ cursor: LINK_CURSOR }), query) as PageRequest;
}

const address = z.string().meta({ format: 'email', example: 'steve.wozniak@gmail.com' });
const recipientClickedLinkSchema = z.object({ url: z.string().meta({ example: 'https://acme.com/pricing' }), clicks: z.int().min(1) });

export const broadcastRecipientSchema = z
  .object({
    id: wireId.meta({ description: "The broadcast email's id (a cursor for `after` and `before`)." }),
    contact_id: wireId.nullable(),
    email: address,
    count: z.int().min(1).optional().meta({ description: '`opened` and `clicked`: how many opens or clicks.' }),
    clicked_links: z.array(recipientClickedLinkSchema).optional().meta({ description: '`clicked`: the links, most clicked first.' }),
    bounce_type: z.enum(BOUNCE_TYPES).optional().meta({ description: '`bounced`: the bounce type.' }),
  })
  .meta({ description: 'A recipient of the broadcast who had the event asked for; the fields after `email` come with their types only.' });
export const broadcastRecipientListSchema = wireList(broadcastRecipientSchema);

export const broadcastClickedLinkSchema = z.object({
  id: z.string().meta({ description: 'An opaque cursor for this row (for `after` and `before`).', example: 'aHR0cHM6Ly9hY21lLmNvbS9wcmljaW5n' }),
  url: z.string().meta({ example: 'https://acme.com/pricing' }),
  clicks: z.int().min(1),
  unique_clicks: z.int().min(1).meta({ description: 'Recipients who clicked it.' }),
});
export const broadcastClickedLinkListSchema = wireList(broadcastClickedLinkSchema);

export type BroadcastRecipientBody = z.output<typeof broadcastRecipientSchema>;

export function presentRecipient(
  type: RecipientType,
  hit: Pick<BroadcastEmailHit, 'emailId' | 'address'> & Partial<BroadcastEmailHit>,
  contactId: string | null,
): BroadcastRecipientBody {
  const base = { id: hit.emailId, contact_id: contactId, email: hit.address };
  if (type === 'opened') return { ...base, count: hit.count ?? 1 };
  if (type === 'clicked') return { ...base, count: hit.count ?? 1, clicked_links: hit.links ?? [] };
  if (type === 'bounced') return { ...base, bounce_type: (hit.bounceType ?? 'undetermined') as RecipientBounceType };
  return base;
}
