import { isoTimestamp, restTimestamp } from '@herald/core';
import type { Suppression } from './suppression.types';

/** GET /suppressions/:idOrEmail, POST /suppressions (Resend's entry shape). */
export function presentSuppression(entry: Suppression) {
  return { object: 'suppression' as const, ...presentSuppressionListEntry(entry) };
}

/** One item of GET /suppressions: the entry without `object`. */
export function presentSuppressionListEntry(entry: Suppression) {
  return {
    id: entry.id,
    email: entry.email,
    origin: entry.origin,
    source_id: entry.sourceId,
    created_at: restTimestamp(entry.createdAt) as string,
  };
}

export function presentDeletedSuppression(entry: Suppression) {
  return { object: 'suppression' as const, id: entry.id, deleted: true as const };
}

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
