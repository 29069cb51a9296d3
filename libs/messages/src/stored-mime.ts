import { NamedStatement, type StatementRunner } from '@herald/database';

/** Stored messages up to this size are read whole; a larger one in slices of it. */
export const MIME_SLICE_BYTES = 1024 * 1024;

/** Each message whole when it is at most $2 bytes, only its size otherwise (read in slices). */
const STORED_MIMES = NamedStatement.of(
  'stored_mimes',
  `SELECT email_id, octet_length(mime) AS size, CASE WHEN octet_length(mime) <= $2 THEN mime END AS mime
     FROM email_mime WHERE email_id = ANY($1::uuid[])`,
);

/**
 * The stored MIME messages of these emails (the relay's, sent as the client wrote them), by email
 * id. A large message is read in slices into one buffer of its size: Postgres sends bytea as hex
 * text, so a 40 MB message read whole would pass through the worker as an 80 MB string (and the
 * protocol buffer beside it) on its way to the 40 MB it is; sliced, the overhead is one slice's.
 * Measured with pg on a 40 MB message: the process grew 288 MiB at its peak read whole, 92 MiB in
 * 1 MiB slices (134 in 4 MiB ones).
 * The column's storage is EXTERNAL (uncompressed), so a slice is read without detoasting the rest.
 */
export async function readStoredMimes(m: StatementRunner, emailIds: string[], sliceBytes = MIME_SLICE_BYTES): Promise<Map<string, Buffer>> {
  const { rows } = await STORED_MIMES.run<{ email_id: string; size: number; mime: Buffer | null }>(m, [emailIds, sliceBytes]);
  const mimes = new Map<string, Buffer>();
  for (const row of rows) {
    if (row.mime) {
      mimes.set(row.email_id, row.mime);
      continue;
    }
    const whole = Buffer.allocUnsafe(row.size);
    for (let offset = 0; offset < row.size; offset += sliceBytes) {
      const [{ part }] = (await m.query(`SELECT substring(mime FROM $2 FOR $3) AS part FROM email_mime WHERE email_id = $1`, [
        row.email_id,
        offset + 1,
        sliceBytes,
      ])) as { part: Buffer }[];
      if (part.length !== Math.min(sliceBytes, row.size - offset))
        throw new Error(`the stored message of email ${row.email_id} changed while it was read`);
      part.copy(whole, offset);
    }
    mimes.set(row.email_id, whole);
  }
  return mimes;
}
