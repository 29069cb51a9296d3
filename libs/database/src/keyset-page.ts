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

/** A row as merged pages sort it: created_at in microseconds since the epoch (KEYSET_MICROSECONDS, as text: a bigint), and its id. */
export interface Keyed {
  id: string;
  keyset_us: string;
}

/** The SQL of a row's created_at in microseconds since the epoch, as text: select it `AS keyset_us` for mergeKeysetPages. */
export const KEYSET_MICROSECONDS = `(extract(epoch FROM created_at) * 1000000)::bigint::text`;

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
  const at = cursor ? await keysetCursor(await holding(cursor), query.table, query.teamId, cursor) : null;
  if (cursor && at === null) return { rows: [], hasMore: false };
  const keyed = { ...query, columns: `${query.columns}, ${KEYSET_MICROSECONDS} AS keyset_us` };
  const pages = await Promise.all(dbs.map((db) => pageQuery<R & Keyed>(db, keyed, page, cursor ? { id: cursor, at } : null)));
  return mergeKeysetPages(pages, page);
}

/** The created_at of the team's row `id` in microseconds (KEYSET_MICROSECONDS), or null when `db` holds no such row. */
export async function keysetCursor(db: DataSource, table: string, teamId: string, id: string): Promise<string | null> {
  const found: { us: string }[] = await db.query(`SELECT ${KEYSET_MICROSECONDS} AS us FROM ${table} WHERE team_id = $1 AND id = $2`, [teamId, id]);
  return found[0]?.us ?? null;
}

/**
 * The SQL condition of rows past a cursor given as its created_at in microseconds (keysetCursor)
 * and its id, for the databases that do not hold the cursor's row; `at` and `id` are parameter
 * placeholders, `prefix` the table's alias with its dot.
 */
export function pastKeysetCursor(page: PageRequest, at: string, id: string, prefix = ''): string {
  return `(${prefix}created_at, ${prefix}id) ${page.before ? '>' : '<'} (timestamptz 'epoch' + ${at}::bigint * interval '1 microsecond', ${id})`;
}

/**
 * Pages of several databases (each `limit + 1` rows past the cursor, in page order, with
 * `keyset_us`) merged into one: the `limit` nearest the cursor, newest first. One page is taken
 * as it is (its keyset_us need not be read).
 */
export function mergeKeysetPages<R>(pages: (R & Keyed)[][], page: PageRequest): { rows: R[]; hasMore: boolean } {
  // Each page is in the order asked for (newest first, or oldest first toward newer rows): merge in that order.
  const direction = page.before ? 1 : -1;
  const merged = pages.length === 1 ? pages[0] : pages.flat().sort((a, b) => direction * compareKeys(a, b));
  const kept = merged.slice(0, page.limit).map(({ keyset_us: _, ...row }) => row as R);
  return { rows: page.before ? kept.reverse() : kept, hasMore: merged.length > page.limit };
}

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
    params.push(cursor.id);
    const id = `$${params.length}`;
    if (cursor.at === null) {
      conditions.push(`(created_at, id) ${page.before ? '>' : '<'} (SELECT created_at, id FROM ${query.table} WHERE team_id = $1 AND id = ${id})`);
    } else {
      params.push(cursor.at);
      conditions.push(pastKeysetCursor(page, `$${params.length}`, id));
    }
  }
  // Toward newer rows the `limit` closest to the cursor are the oldest ones: fetch ascending, then flip.
  const order = page.before ? 'created_at, id' : 'created_at DESC, id DESC';
  return db.query(`SELECT ${query.columns} FROM ${query.table} WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT $2`, params);
}
