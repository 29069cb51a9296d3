import { DataSource } from 'typeorm';

/** A page request as the list endpoints take it (`limit`, and at most one of `after`/`before`). */
export interface PageRequest {
  limit: number;
  after: string | null;
  before: string | null;
}

export interface PageQuery {
  table: string;
  columns: string;
  teamId: string;
  /** Extra `column = value` conditions (e.g. a suppression's origin). Column names are code, never input. */
  equals?: Record<string, unknown>;
  /** Extra `column LIKE pattern` conditions (a search); the pattern's `%`, `_` and `\` are the caller's to escape. */
  like?: Record<string, string>;
}

/**
 * One page of a team's rows, newest first, by the (created_at, id) keyset: `after` pages toward
 * older rows, `before` toward newer ones, the cursor row excluded. The cursor is compared inside
 * SQL, because JavaScript dates would drop created_at's microseconds; a cursor that is not one of
 * the team's rows yields an empty page.
 */
export async function keysetPage<R>(db: DataSource, query: PageQuery, page: PageRequest): Promise<{ rows: R[]; hasMore: boolean }> {
  const params: unknown[] = [query.teamId, page.limit + 1];
  const conditions = ['team_id = $1'];
  for (const [column, value] of Object.entries(query.equals ?? {})) {
    params.push(value);
    conditions.push(`${column} = $${params.length}`);
  }
  for (const [column, pattern] of Object.entries(query.like ?? {})) {
    params.push(pattern);
    conditions.push(`${column} LIKE $${params.length}`);
  }
  const cursor = page.after ?? page.before;
  if (cursor) {
    params.push(cursor);
    conditions.push(
      `(created_at, id) ${page.before ? '>' : '<'} (SELECT created_at, id FROM ${query.table} WHERE team_id = $1 AND id = $${params.length})`,
    );
  }
  // Toward newer rows the `limit` closest to the cursor are the oldest ones: fetch ascending, then flip.
  const order = page.before ? 'created_at, id' : 'created_at DESC, id DESC';
  const rows: R[] = await db.query(
    `SELECT ${query.columns} FROM ${query.table} WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT $2`,
    params,
  );
  const kept = rows.slice(0, page.limit);
  return { rows: page.before ? kept.reverse() : kept, hasMore: rows.length > page.limit };
}
