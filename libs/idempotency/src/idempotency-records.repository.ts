import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes, managerOf, type Transaction } from '@herald/database';
import { IDEMPOTENCY_CONFIG, type IdempotencyConfig } from './idempotency.config';

/** A committed response for a key: the durable copy behind the Redis registry. */
export interface IdempotencyRecord {
  teamId: string;
  endpoint: string;
  key: string;
  requestHash: string;
  statusCode: number;
  response: unknown;
  createdAt: Date;
}

export type NewIdempotencyRecord = Omit<IdempotencyRecord, 'createdAt'>;

/**
 * Thrown by `insert` when a live (non-expired) record for the key is already committed. The
 * caller's transaction must roll back so the emails it wrote alongside disappear with it.
 */
export class IdempotencyConflictError extends Error {
  constructor() {
    super('idempotency record already committed for this key');
    this.name = 'IdempotencyConflictError';
  }
}

const PRIMARY_KEY = 'idempotency_records_pkey';

/**
 * True when `error` means "another request already committed this key": our own signal from
 * `insert`, or a raw Postgres unique violation on the table's primary key (from a plain INSERT,
 * whether pg's error or TypeORM's QueryFailedError wrapping it).
 */
export function isIdempotencyConflict(error: unknown): boolean {
  if (error instanceof IdempotencyConflictError) return true;
  const candidates = [error, (error as { driverError?: unknown } | null)?.driverError];
  return candidates.some((e) => {
    const pg = e as { code?: unknown; constraint?: unknown } | null | undefined;
    return pg?.code === '23505' && pg.constraint === PRIMARY_KEY;
  });
}

interface RecordRow {
  request_hash: string;
  status_code: number;
  response: unknown;
  created_at: Date;
}

/**
 * The Postgres backstop of the idempotency registry (`idempotency_records`). Ages are judged by
 * the database clock (`now()`), the same clock that stamps `created_at`, so API processes in
 * different regions with slightly different clocks agree on what has expired. A record is written
 * in its emails' transaction, so it lives in their region's email plane; a key is looked for in
 * every region's (the rare paths: Redis lost the key, or cannot be reached, or holds a marker).
 */
@Injectable()
export class IdempotencyRecords {
  private readonly ttlSeconds: number;

  constructor(
    private readonly planes: EmailPlanes,
    @Inject(IDEMPOTENCY_CONFIG.token) config: IdempotencyConfig,
  ) {
    this.ttlSeconds = config.IDEMPOTENCY_TTL_SECONDS;
  }

  /**
   * Records the response inside the caller's transaction, so the record and the emails commit
   * or roll back together. Throws IdempotencyConflictError when a live record exists.
   *
   * An expired record for the key may still be there (purging is periodic), and must not block
   * the key's reuse: the upsert overwrites the row only when it is older than the TTL, and
   * returns no row otherwise, which is the conflict. Concurrent inserts of one key serialise on
   * the primary key: the second waits for the first transaction, then sees its committed row
   * (READ COMMITTED re-checks the latest version) and reports the conflict, or inserts if the
   * first rolled back. Unlike a plain INSERT, no statement fails inside the caller's
   * transaction; the thrown error is what rolls it back.
   */
  async insert(tx: Transaction, record: NewIdempotencyRecord): Promise<void> {
    const manager = managerOf(this.planes.home, tx);
    if (!manager.queryRunner?.isTransactionActive) {
      // Outside a transaction the record could commit without the emails (or vice versa).
      throw new Error('IdempotencyRecords.insert must run inside the transaction that stores the emails');
    }
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_records AS r (team_id, endpoint, key, request_hash, status_code, response)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (team_id, endpoint, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code,
             response = EXCLUDED.response, created_at = EXCLUDED.created_at
         WHERE r.created_at <= now() - $7 * interval '1 second'
       RETURNING 1 AS stored`,
      [
        record.teamId,
        record.endpoint,
        record.key,
        record.requestHash,
        record.statusCode,
        // Stringified by us: pg would turn a top-level array into a Postgres array literal.
        JSON.stringify(record.response ?? null),
        this.ttlSeconds,
      ],
    );
    if (rows.length === 0) throw new IdempotencyConflictError();
  }

  /** The live record for the key, in whichever region's email plane holds it, or null (never stored, or older than the TTL). */
  async find(teamId: string, endpoint: string, key: string): Promise<IdempotencyRecord | null> {
    for (const { db } of this.planes.all()) {
      const found = await this.findIn(await db, teamId, endpoint, key);
      if (found) return found;
    }
    return null;
  }

  private async findIn(db: DataSource, teamId: string, endpoint: string, key: string): Promise<IdempotencyRecord | null> {
    const rows: RecordRow[] = await db.query(
      `SELECT request_hash, status_code, response, created_at
         FROM idempotency_records
        WHERE team_id = $1 AND endpoint = $2 AND key = $3
          AND created_at > now() - $4 * interval '1 second'`,
      [teamId, endpoint, key, this.ttlSeconds],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      teamId,
      endpoint,
      key,
      requestHash: row.request_hash,
      statusCode: row.status_code,
      response: row.response,
      createdAt: row.created_at,
    };
  }

  /**
   * Deletes records created before `olderThan`, across all teams (a maintenance task, hence the
   * exception to "team id first"). Works in batches so a backlog (after downtime) never holds
   * long locks or one huge transaction; rows being upserted right now are skipped, not waited
   * for. Returns how many rows went.
   */
  async purgeExpired(olderThan: Date, batchSize = 5000): Promise<number> {
    let total = 0;
    for (const { db } of this.planes.all()) total += await this.purgeIn(await db, olderThan, batchSize);
    return total;
  }

  private async purgeIn(db: DataSource, olderThan: Date, batchSize: number): Promise<number> {
    let total = 0;
    for (;;) {
      const [{ deleted }]: [{ deleted: number }] = await db.query(
        `WITH doomed AS (
           SELECT team_id, endpoint, key FROM idempotency_records
            WHERE created_at < $1
            LIMIT $2
              FOR UPDATE SKIP LOCKED
         ), gone AS (
           DELETE FROM idempotency_records r USING doomed d
            WHERE r.team_id = d.team_id AND r.endpoint = d.endpoint AND r.key = d.key
              AND r.created_at < $1
           RETURNING 1
         )
         SELECT count(*)::int AS deleted FROM gone`,
        [olderThan, batchSize],
      );
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
