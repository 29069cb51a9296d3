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
  const cursor = page.after ?? page.before;
  const rows = await pageQuery<R>(db, query, page, cursor ? { id: cursor, at: null } : null);
  const kept = rows.slice(0, page.limit);
  return { rows: page.before ? kept.reverse() : kept, hasMore: rows.length > page.limit };
}

/** A row as the merged pages sort it: created_at in microseconds since the epoch (as text: a bigint), and its id. */
interface Keyed {
  id: string;
  keyset_us: string;
}

/**
 * keysetPage over several databases holding rows of one kind (each region's email plane, where
 * a team's emails are spread over the regions of its domains), in one order. Each database is
 * asked for the page past the cursor, and the pages are merged. The cursor's created_at is read
 * from the database holding its row (`holding`), in microseconds, so no precision is lost between
 * databases. With one database this is keysetPage, the same statement.
 */
export async function mergedKeysetPage<R>(
  dbs: DataSource[],
  holding: (id: string) => Promise<DataSource>,
  query: PageQuery,
  page: PageRequest,
): Promise<{ rows: R[]; hasMore: boolean }> {
  if (dbs.length === 1) return keysetPage<R>(dbs[0], query, page);
  const cursor = page.after ?? page.before;
  let at: string | null = null;
  if (cursor) {
    const found: { us: string }[] = await (
      await holding(cursor)
    ).query(`SELECT ${MICROSECONDS} AS us FROM ${query.table} WHERE team_id = $1 AND id = $2`, [query.teamId, cursor]);
    if (!found.length) return { rows: [], hasMore: false };
    at = found[0].us;
  }
  const keyed = { ...query, columns: `${query.columns}, ${MICROSECONDS} AS keyset_us` };
  const pages = await Promise.all(dbs.map((db) => pageQuery<R & Keyed>(db, keyed, page, cursor ? { id: cursor, at } : null)));
  // Each page is in the order asked for (newest first, or oldest first toward newer rows): merge in that order.
  const direction = page.before ? 1 : -1;
  const merged = pages.flat().sort((a, b) => direction * compareKeys(a, b));
  const kept = merged.slice(0, page.limit).map(({ keyset_us: _, ...row }) => row as R);
  return { rows: page.before ? kept.reverse() : kept, hasMore: merged.length > page.limit };
}

const MICROSECONDS = `(extract(epoch FROM created_at) * 1000000)::bigint::text`;

function compareKeys(a: Keyed, b: Keyed): number {
  const [x, y] = [BigInt(a.keyset_us), BigInt(b.keyset_us)];
  if (x !== y) return x < y ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The rows past the cursor, `limit + 1` of them, in page order. The cursor is its row's id, and
 * its created_at is read in SQL from the same table (`at` null), or given in microseconds (a
 * merged page's other databases, which do not hold the row).
 */
async function pageQuery<R>(db: DataSource, query: PageQuery, page: PageRequest, cursor: { id: string; at: string | null } | null): Promise<R[]> {
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
  if (cursor) {
    const past = page.before ? '>' : '<';
    params.push(cursor.id);
    const id = `$${params.length}`;
    if (cursor.at === null) {
      conditions.push(`(created_at, id) ${past} (SELECT created_at, id FROM ${query.table} WHERE team_id = $1 AND id = ${id})`);
    } else {
      params.push(cursor.at);
      conditions.push(`(created_at, id) ${past} (timestamptz 'epoch' + $${params.length}::bigint * interval '1 microsecond', ${id})`);
    }
  }
  // Toward newer rows the `limit` closest to the cursor are the oldest ones: fetch ascending, then flip.
  const order = page.before ? 'created_at, id' : 'created_at DESC, id DESC';
  return db.query(`SELECT ${query.columns} FROM ${query.table} WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT $2`, params);
}
