import { isPlainObject, parsePage } from '@herald/http';
import type { AuditEntry } from '@herald/people';

/** An audit log page's request: `limit` and `after` (the last entry's id), newest first. */
export function parseAuditPage(query: unknown): { limit: number; after: string | null } {
  const input = isPlainObject(query) ? query : {};
  return parsePage({ limit: input['limit'], after: input['after'] }, { forwardOnly: true, blankLimitIsDefault: true });
}

/** A page of the log as the dashboard shows it: who, what, when, from which address; `entries` holds one more than `limit` when there are more. */
export function presentAuditPage(entries: AuditEntry[], limit: number) {
  return {
    has_more: entries.length > limit,
    data: entries.slice(0, limit).map((e) => ({
      id: e.id,
      action: e.action,
      actor_email: e.actorEmail,
      ip: e.ip,
      user_agent: e.userAgent,
      created_at: e.createdAt.toISOString(),
      detail: e.detail,
    })),
  };
}
