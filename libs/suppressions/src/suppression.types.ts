export type SuppressionOrigin = 'bounce' | 'complaint' | 'manual';
export const SUPPRESSION_ORIGINS = ['bounce', 'complaint', 'manual'] as const satisfies readonly SuppressionOrigin[];

export interface Suppression {
  id: string;
  teamId: string;
  /** The bare address, lowercased. */
  email: string;
  origin: SuppressionOrigin;
  /** The email whose bounce or complaint caused it; null when added by hand. */
  sourceId: string | null;
  reason: string | null;
  createdAt: Date;
}

/** A page of a team's suppressions, newest first; `after` pages toward older ones, `before` toward newer. */
export interface SuppressionPage {
  limit: number;
  after: string | null;
  before: string | null;
  origin: SuppressionOrigin | null;
  /** The dashboard's search: lowercased, part of the address (see SuppressionsRepository.listPage). */
  search?: string;
}
