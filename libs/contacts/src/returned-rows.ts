/**
 * The rows of an UPDATE or DELETE … RETURNING run through TypeORM's query(), which answers
 * `[rows, count]` for those (and the rows alone for SELECT and INSERT).
 */
export function returnedRows<R>(result: unknown): R[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as R[];
  return Array.isArray(result) ? (result as R[]) : [];
}
