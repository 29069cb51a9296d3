import { parsePage } from '@herald/http';
import type { DomainPage } from './domains.repository';

/**
 * GET /domains. As at Resend, pagination is optional on this older list endpoint: without
 * `limit` or a cursor, every domain in one response (null); otherwise a page of domain ids.
 */
export function validateDomainListQuery(query: unknown): DomainPage | null {
  return parsePage(query, { limitOptional: true });
}
