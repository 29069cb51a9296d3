import { z } from 'zod';
import { isoTimestamp, restTimestamp } from '@herald/core';
import { wireDeleted, wireId, wireList, wireTimestamp } from '@herald/http';
import { SUPPRESSION_ORIGINS, type Suppression } from './suppression.types';

/* Resend's wire shapes for the suppression list, each the zod schema its presenter answers (/openapi.json is generated from them). */

/** One item of GET /suppressions: the entry without `object`. */
export const suppressionListEntrySchema = z.object({
  id: wireId,
  email: z.string().meta({ format: 'email', description: 'The address, lowercased.', example: 'bounced@example.com' }),
  origin: z.enum(SUPPRESSION_ORIGINS).meta({
    description: '`bounce`: a hard bounce. `complaint`: a spam report. `manual`: added through the API.',
  }),
  source_id: wireId.nullable().meta({ description: 'The email whose bounce or complaint suppressed the address; null when added by hand.' }),
  created_at: wireTimestamp,
});

/** GET /suppressions/:idOrEmail, POST /suppressions (Resend's entry shape). */
export const suppressionSchema = z.object({ object: z.literal('suppression'), ...suppressionListEntrySchema.shape });
export const suppressionListSchema = wireList(suppressionListEntrySchema);
export const deletedSuppressionSchema = wireDeleted('suppression');
export const addedSuppressionsSchema = z.object({
  data: z.array(suppressionSchema).meta({ description: 'The entries, in the order of `emails` (duplicates once).' }),
});
export const removedSuppressionsSchema = z.object({
  data: z.array(deletedSuppressionSchema).meta({ description: 'The entries removed; addresses or ids not listed are left out.' }),
});

export type SuppressionListEntry = z.infer<typeof suppressionListEntrySchema>;
export type SuppressionBody = z.infer<typeof suppressionSchema>;
export type SuppressionList = z.infer<typeof suppressionListSchema>;
export type DeletedSuppression = z.infer<typeof deletedSuppressionSchema>;
export type AddedSuppressions = z.infer<typeof addedSuppressionsSchema>;
export type RemovedSuppressions = z.infer<typeof removedSuppressionsSchema>;

export function presentSuppression(entry: Suppression): SuppressionBody {
  return { object: 'suppression', ...presentSuppressionListEntry(entry) };
}

export function presentSuppressionListEntry(entry: Suppression): SuppressionListEntry {
  return {
    id: entry.id,
    email: entry.email,
    origin: entry.origin,
    source_id: entry.sourceId,
    created_at: restTimestamp(entry.createdAt),
  };
}

export function presentDeletedSuppression(entry: Suppression): DeletedSuppression {
  return { object: 'suppression', id: entry.id, deleted: true };
}

export const presentSuppressionList = (page: { items: Suppression[]; hasMore: boolean }): SuppressionList => ({
  object: 'list',
  has_more: page.hasMore,
  data: page.items.map(presentSuppressionListEntry),
});

/** The `data` of suppression.added / suppression.removed events (ISO timestamps, as webhooks use). */
export function suppressionEventData(entry: Suppression) {
  return {
    id: entry.id,
    email: entry.email,
    origin: entry.origin,
    source_id: entry.sourceId,
    created_at: isoTimestamp(entry.createdAt),
  };
}
