import { Injectable } from '@nestjs/common';
import { keysetPage, managerOf, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import type { Suppression, SuppressionOrigin, SuppressionPage } from './suppression.types';

interface SuppressionRow {
  id: string;
  team_id: string;
  email: string;
  origin: SuppressionOrigin;
  source_id: string | null;
  reason: string | null;
  created_at: Date;
}

const COLUMNS = 'id, team_id, email, origin, source_id, reason, created_at';

/**
 * A team's suppression list. Every method takes the team first; emails are passed lowercased.
 * The writes take the transaction to run in (`tx`), where their events are recorded too.
 */
@Injectable()
export class SuppressionsRepository {
  constructor(private readonly db: DataSource) {}

  /** Runs `work` in a new transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Inserts a manual entry unless the address is listed already; `created` says which happened. */
  async addManual(teamId: string, id: string, email: string, tx?: Transaction): Promise<{ entry: Suppression; created: boolean }> {
    const inserted: SuppressionRow[] = await managerOf(this.db, tx).query(
      `INSERT INTO suppressions (id, team_id, email, origin) VALUES ($1, $2, $3, 'manual')
       ON CONFLICT (team_id, email) DO NOTHING RETURNING ${COLUMNS}`,
      [id, teamId, email],
    );
    if (inserted.length) return { entry: toSuppression(inserted[0]), created: true };
    const existing = await this.getByEmail(teamId, email, tx);
    // Removed between the two statements: try once more (it will insert).
    return existing ? { entry: existing, created: false } : this.addManual(teamId, id, email, tx);
  }

  /** Inserts or re-suppresses (a later bounce or complaint takes over origin, source and reason). */
  async upsert(
    teamId: string,
    id: string,
    email: string,
    origin: SuppressionOrigin,
    sourceId: string | null,
    reason: string | null,
    tx?: Transaction,
  ): Promise<{ entry: Suppression; created: boolean }> {
    const rows: (SuppressionRow & { inserted: boolean })[] = await managerOf(this.db, tx).query(
      `INSERT INTO suppressions (id, team_id, email, origin, source_id, reason) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (team_id, email) DO UPDATE SET origin = excluded.origin, source_id = excluded.source_id, reason = excluded.reason
       RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
      [id, teamId, email, origin, sourceId, reason],
    );
    return { entry: toSuppression(rows[0]), created: rows[0].inserted };
  }

  async getById(teamId: string, id: string): Promise<Suppression | null> {
    const rows: SuppressionRow[] = await this.db.query(`SELECT ${COLUMNS} FROM suppressions WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toSuppression(rows[0]) : null;
  }

  async getByEmail(teamId: string, email: string, tx?: Transaction): Promise<Suppression | null> {
    const rows: SuppressionRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM suppressions WHERE team_id = $1 AND email = $2`, [
      teamId,
      email,
    ]);
    return rows.length ? toSuppression(rows[0]) : null;
  }

  /** Deletes the entries with these ids, or these emails; answers the deleted ones. */
  async deleteMany(teamId: string, by: { ids: string[] } | { emails: string[] }, tx?: Transaction): Promise<Suppression[]> {
    const [column, values] = 'ids' in by ? ['id', by.ids] : ['email', by.emails];
    if (!values.length) return [];
    const result: unknown = await managerOf(this.db, tx).query(
      `DELETE FROM suppressions WHERE team_id = $1 AND ${column} = ANY($2::${column === 'id' ? 'uuid' : 'text'}[]) RETURNING ${COLUMNS}`,
      [teamId, values],
    );
    // TypeORM answers `[rows, count]` for a DELETE run through query().
    const rows = (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : []) as SuppressionRow[];
    return rows.map(toSuppression);
  }

  /** The team's entries for these (lowercased) addresses made before `before`, newest first. */
  async entriesBefore(teamId: string, emails: string[], before: Date, limit: number): Promise<Suppression[]> {
    if (!emails.length) return [];
    const rows: SuppressionRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM suppressions WHERE team_id = $1 AND email = ANY($2::text[]) AND created_at < $3 ORDER BY created_at DESC LIMIT $4`,
      [teamId, emails, before, limit],
    );
    return rows.map(toSuppression);
  }

  /** Which of these (lowercased) addresses the team has suppressed. */
  async suppressedAmong(teamId: string, emails: string[]): Promise<string[]> {
    if (!emails.length) return [];
    const rows: { email: string }[] = await this.db.query(`SELECT email FROM suppressions WHERE team_id = $1 AND email = ANY($2::text[])`, [
      teamId,
      emails,
    ]);
    return rows.map((r) => r.email);
  }

  /** Up to `limit` suppressed addresses of the team (what SuppressionCache holds of it). */
  async teamList(teamId: string, limit: number): Promise<string[]> {
    const rows: { email: string }[] = await this.db.query(`SELECT email FROM suppressions WHERE team_id = $1 LIMIT $2`, [teamId, limit]);
    return rows.map((r) => r.email);
  }

  /** The region the team's events go to. */
  async teamHomeRegion(teamId: string, tx?: Transaction): Promise<string | null> {
    const rows: { home_region: string }[] = await managerOf(this.db, tx).query(`SELECT home_region FROM teams WHERE id = $1`, [teamId]);
    return rows[0]?.home_region ?? null;
  }

  /**
   * Newest first, `limit` at most, and whether there are more beyond the page. A search of three
   * characters or more matches anywhere in the address, a shorter one its start: the trigram
   * index (migration 1765501000000) serves both, and one or two letters anywhere would match
   * most of a large list anyway.
   */
  async listPage(teamId: string, page: SuppressionPage): Promise<{ items: Suppression[]; hasMore: boolean }> {
    const equals = page.origin ? { origin: page.origin } : {};
    const like: Record<string, string> = page.search ? { email: searchPattern(page.search) } : {};
    const { rows, hasMore } = await keysetPage<SuppressionRow>(this.db, { table: 'suppressions', columns: COLUMNS, teamId, equals, like }, page);
    return { items: rows.map(toSuppression), hasMore };
  }
}

/** A LIKE pattern for `search` (lowercase, as the stored addresses), its own `%`, `_` and `\` taken literally. */
export function searchPattern(search: string): string {
  const literal = search.toLowerCase().replace(/[\\%_]/g, '\\$&');
  return search.length >= 3 ? `%${literal}%` : `${literal}%`;
}

function toSuppression(row: SuppressionRow): Suppression {
  return {
    id: row.id,
    teamId: row.team_id,
    email: row.email,
    origin: row.origin,
    sourceId: row.source_id,
    reason: row.reason,
    createdAt: row.created_at,
  };
}
