import { z } from 'zod';
import { isUuid } from '@herald/core';
import type { EngagementHit } from '@herald/messages';

/** A user agent is stored and sent in events up to this many characters (a header may hold 16 KB). */
export const MAX_USER_AGENT = 1024;

const hitSchema = z.object({
  id: z.string().refine(isUuid, 'must be a UUID'),
  kind: z.enum(['open', 'click']),
  emailId: z.string().refine(isUuid, 'must be a UUID'),
  position: z.number().int().min(0).max(65_535),
  link: z.object({ index: z.number().int().min(0).max(65_535), url: z.string().min(1) }).nullable(),
  ipAddress: z.string().max(64),
  userAgent: z.string().max(MAX_USER_AGENT),
  at: z.iso.datetime({ offset: true }),
  machine: z.boolean(),
  reason: z.enum(['user_agent', 'apple_privacy', 'link_scanner']).nullable(),
});

/**
 * The message on the region's tracking stream: the hits one api process answered together,
 * waiting to be recorded. Each hit keeps the id it was given on arrival, so a message delivered
 * twice (or a hit published again after a lost ack) is recorded once.
 */
export const trackingHitsSchema = z.object({ hits: z.array(hitSchema).min(1) });

/** A Date serialises as its ISO string (Date.prototype.toJSON), as `at` is read back: no copy of each hit. */
export const encodeHits = (hits: EngagementHit[]): string => JSON.stringify({ hits });

export const decodeHits = (message: z.infer<typeof trackingHitsSchema>): EngagementHit[] => message.hits.map((h) => ({ ...h, at: new Date(h.at) }));
