import { Injectable } from '@nestjs/common';
import { affectedRows, managerOf, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import type { ImportChunk, StoredPlan } from './contact-import-rows';
import type { OnConflict, RejectedRow } from './contact-imports.repository';
import { returnedRows } from './returned-rows';
import type { TopicSubscription } from './contact.types';

/** What the runner needs of an import it holds: how to read its parts, where to write, how far it got. */
export interface ImportJob {
  id: string;
  teamId: string;
  onConflict: OnConflict;
  plan: StoredPlan;
  segmentIds: string[];
  topics: { id: string; subscription: TopicSubscription }[];
  /** The stored parts of the file, and how many of them are written (the next one to write). */
  chunks: number;
  cursor: number;
  /** Rejected rows in the report so far. */
  reported: number;
}

/** What one part of an import wrote, to add to its counts. */
export interface ChunkProgress {
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  rejected: RejectedRow[];
}

/** The upload of a new import: its settings. */
export interface ImportUpload {
  onConflict: OnConflict;
  plan: StoredPlan;
  segmentIds: string[];
  topics: { id: string; subscription: TopicSubscription }[];
}

/** Another process wrote the part this one was about to write (its lease ran out under a slow part). */
export class ImportCursorMoved extends Error {
  constructor(readonly importId: string) {
    super(`The contact import ${importId} moved on in another process.`);
  }
}

interface JobRow {
  id: string;
  team_id: string;
  on_conflict: OnConflict;
  plan: StoredPlan;
  segment_ids: string[];
  topics: { id: string; subscription: TopicSubscription }[];
  chunks: number;
  cursor: number;
  reported: number;
}

/**
 * The background side of CSV imports: the stored upload (contact_import_chunks), the lease an api
 * process holds an import with, and the cursor that moves once per part, in the part's own
 * transaction. The runner reaches imports by id (it serves every team), as the broadcast fan-out does.
 */
@Injectable()
export class ContactImportJobsRepository {
  constructor(private readonly db: DataSource) {}

  /** Stores parts of an upload as it arrives (before its import is recorded: no transaction, no team yet). */
  async appendChunks(id: string, chunks: ImportChunk[]): Promise<void> {
    if (!chunks.length) return;
    await this.db.query(
      `INSERT INTO contact_import_chunks (import_id, seq, first_line, records, data)
       SELECT $1, c.seq, c.first_line, c.records, c.data FROM unnest($2::int[], $3::int[], $4::int[], $5::text[]) AS c(seq, first_line, records, data)`,
      [id, chunks.map((c) => c.seq), chunks.map((c) => c.firstLine), chunks.map((c) => c.records), chunks.map((c) => c.data)],
    );
  }

  /** Drops the stored parts of an upload that did not become an import (refused, or the client went away). */
  async discardChunks(id: string): Promise<void> {
    await this.db.query(`DELETE FROM contact_import_chunks WHERE import_id = $1`, [id]);
  }

  /**
   * The import of a stored upload, `queued` (its `total` records in `chunks` parts), or
   * `completed` at once when the file has a header alone. One statement: the runner sees the
   * import with its whole file or not at all.
   */
  async insertQueued(teamId: string, id: string, upload: ImportUpload, total: number, chunks: number): Promise<void> {
    await this.db.query(
      `INSERT INTO contact_imports (id, team_id, status, on_conflict, plan, segment_ids, topics, total, chunks, completed_at)
       VALUES ($1, $2, CASE WHEN $8 = 0 THEN 'completed' ELSE 'queued' END, $3, $4::jsonb, $5::uuid[], $6::jsonb, $7, $8, CASE WHEN $8 = 0 THEN now() END)`,
      [id, teamId, upload.onConflict, JSON.stringify(upload.plan), upload.segmentIds, JSON.stringify(upload.topics), total, chunks],
    );
  }

  /**
   * Deletes the parts of uploads that never became an import (a process died while storing them,
   * or their team was deleted) stored more than `seconds` ago; answers how many.
   */
  async sweepOrphanChunks(seconds: number): Promise<number> {
    const result: unknown = await this.db.query(
      `DELETE FROM contact_import_chunks c
        WHERE c.created_at < now() - make_interval(secs => $1)
          AND NOT EXISTS (SELECT 1 FROM contact_imports i WHERE i.id = c.import_id)`,
      [seconds],
    );
    return affectedRows(result);
  }

  /**
   * Takes the oldest import that is due (queued, or in progress under a lease that ran out: its
   * process died) for `leaseSeconds`, and marks it `in_progress`. SKIP LOCKED: any number of
   * processes can ask at once, each gets another.
   */
  async claimDue(leaseSeconds: number): Promise<ImportJob | null> {
    const rows = returnedRows<JobRow>(
      await this.db.query(
        `UPDATE contact_imports i SET status = 'in_progress', lease_until = now() + make_interval(secs => $1)
           FROM (SELECT id FROM contact_imports
                  WHERE status IN ('queued', 'in_progress') AND (lease_until IS NULL OR lease_until < now())
                  ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED) due
          WHERE i.id = due.id
         RETURNING i.id, i.team_id, i.on_conflict, i.plan, i.segment_ids, i.topics, i.chunks, i.cursor, jsonb_array_length(i.rejected_rows) AS reported`,
        [leaseSeconds],
      ),
    );
    const row = rows[0];
    return row
      ? {
          id: row.id,
          teamId: row.team_id,
          onConflict: row.on_conflict,
          plan: row.plan,
          segmentIds: row.segment_ids,
          topics: row.topics,
          chunks: row.chunks,
          cursor: row.cursor,
          reported: row.reported,
        }
      : null;
  }

  /** Part `seq` of the import's file. */
  async chunk(id: string, seq: number): Promise<ImportChunk | null> {
    const rows: { first_line: number; records: number; data: string }[] = await this.db.query(
      `SELECT first_line, records, data FROM contact_import_chunks WHERE import_id = $1 AND seq = $2`,
      [id, seq],
    );
    const row = rows[0];
    return row ? { seq, firstLine: row.first_line, records: row.records, data: row.data } : null;
  }

  /**
   * In the part's transaction, before its contacts are written: locks the import and checks that
   * its cursor is still at `from`, where this process found it. Throws ImportCursorMoved (the
   * part is rolled back) when another process took the import over. A second process on the same
   * part waits here until the first commits, then finds the cursor moved.
   */
  async hold(tx: Transaction, id: string, from: number): Promise<void> {
    const rows: unknown[] = await managerOf(this.db, tx).query(
      `SELECT 1 FROM contact_imports WHERE id = $1 AND status = 'in_progress' AND cursor = $2 FOR UPDATE`,
      [id, from],
    );
    if (rows.length !== 1) throw new ImportCursorMoved(id);
  }

  /** In the same transaction, after its contacts: the part's counts and report added, the cursor past it, the lease extended. */
  async advance(tx: Transaction, id: string, progress: ChunkProgress, leaseSeconds: number): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE contact_imports SET cursor = cursor + 1, created = created + $2, updated = updated + $3, skipped = skipped + $4, failed = failed + $5,
              rejected_rows = rejected_rows || $6::jsonb, attempts = 0, lease_until = now() + make_interval(secs => $7)
        WHERE id = $1`,
      [id, progress.created, progress.updated, progress.skipped, progress.failed, JSON.stringify(progress.rejected), leaseSeconds],
    );
  }

  /** Every part is written: `completed`, if this process still holds the import at `cursor`; the stored file is deleted. */
  async finish(id: string, cursor: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const result: unknown = await tx.query(
        `UPDATE contact_imports SET status = 'completed', completed_at = now(), lease_until = NULL
          WHERE id = $1 AND status = 'in_progress' AND cursor = $2`,
        [id, cursor],
      );
      if (affectedRows(result) !== 1) return false;
      await tx.query(`DELETE FROM contact_import_chunks WHERE import_id = $1`, [id]);
      return true;
    });
  }

  /**
   * A part failed to write (`from`, the cursor it was at): held back `retrySeconds`, then tried
   * again, and `failed` (the stored file deleted) after `maxAttempts` failures in a row.
   * Answers whether the import failed for good.
   */
  async attemptFailed(id: string, from: number, error: string, maxAttempts: number, retrySeconds: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const rows = returnedRows<{ status: string }>(
        await tx.query(
          `UPDATE contact_imports SET attempts = attempts + 1, lease_until = now() + make_interval(secs => $3),
                  status = CASE WHEN attempts + 1 >= $4 THEN 'failed' ELSE status END,
                  completed_at = CASE WHEN attempts + 1 >= $4 THEN now() END,
                  error = CASE WHEN attempts + 1 >= $4 THEN $5 END
            WHERE id = $1 AND status = 'in_progress' AND cursor = $2
           RETURNING status`,
          [id, from, retrySeconds, maxAttempts, error],
        ),
      );
      if (rows[0]?.status !== 'failed') return false;
      await tx.query(`DELETE FROM contact_import_chunks WHERE import_id = $1`, [id]);
      return true;
    });
  }

  /** Lets another process take the import at once (this one is shutting down). */
  async release(id: string): Promise<void> {
    await this.db.query(`UPDATE contact_imports SET lease_until = NULL WHERE id = $1 AND status = 'in_progress'`, [id]);
  }
}
