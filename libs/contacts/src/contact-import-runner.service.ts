import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { PeriodicJob } from '@herald/core';
import type { Transaction } from '@herald/database';
import { readChunk, type ChunkRows } from './contact-import-rows';
import { ContactImportJobsRepository, ImportCursorMoved, type ImportJob } from './contact-import-jobs.repository';
import { ContactImportsRepository } from './contact-imports.repository';
import { CONTACTS_CONFIG, type ContactsConfig } from './contacts.config';

const POLL_MS = 1000;
/** Rejected rows kept for the report (the counts stay exact beyond it). */
export const MAX_REPORTED_ROWS = 1000;
/** Failures in a row of one part before the import is given up as `failed` (each tried again a lease later). */
const MAX_ATTEMPTS = 3;
const FAILED = 'The import stopped on an internal error; the rows counted were written.';
/** Parts of uploads that never became an import are deleted this long after they were stored, looked for this often. */
const ORPHAN_SECONDS = 24 * 3600;
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Writes CSV imports in the background, run by the api role (ContactImportRunnerModule, as the
 * broadcast fan-out is): every second, and at once when this process took an upload, it takes
 * the import that is due (queued, or left by a process that died: its lease ran out) and writes
 * its stored parts one after another.
 *
 * Each part is one transaction: the import locked at the cursor this process found it at, the
 * part's contacts created or updated with their segments and topics, then the counts, the report
 * of rejected rows and the cursor moved past the part. A process killed at any point leaves
 * either the whole part or none of it, and the next one resumes at the cursor: no row is written
 * twice, none is skipped. Two processes on one import (a lease that ran out under a slow part):
 * the second waits for the first's lock, finds the cursor moved and rolls back. An address
 * repeated in the file is refused after its first row, across parts: a process that resumes
 * reads the parts written before to know them.
 */
@Injectable()
export class ContactImportRunner implements OnModuleDestroy {
  private readonly logger = new Logger(ContactImportRunner.name);
  private readonly job: PeriodicJob;
  private started = false;
  private sweptAt = 0;

  constructor(
    @Inject(CONTACTS_CONFIG.token) private readonly config: ContactsConfig,
    private readonly jobs: ContactImportJobsRepository,
    private readonly imports: ContactImportsRepository,
  ) {
    this.job = new PeriodicJob(
      () => this.pass(),
      () => POLL_MS,
      (error) => this.logger.warn(`contact import failed: ${error.message}`),
    );
  }

  /** Started by ContactImportRunnerModule, in the roles that run imports (the api role). */
  start(): void {
    this.started = true;
    this.job.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /** Stops taking imports: the part being written commits (or not), the import is released to the others. */
  async stop(): Promise<void> {
    this.started = false;
    await this.job.stop();
  }

  /** An upload was stored: look at once rather than at the next tick. */
  kick(): void {
    if (this.started && !this.job.isStopped)
      void this.job.runOnce().catch((error: Error) => this.logger.warn(`contact import failed: ${error.message}`));
  }

  /** One pass: writes every import due; answers how many parts it wrote. */
  async pass(): Promise<number> {
    if (Date.now() - this.sweptAt > SWEEP_EVERY_MS) {
      this.sweptAt = Date.now();
      const swept = await this.jobs.sweepOrphanChunks(ORPHAN_SECONDS);
      if (swept) this.logger.log(`deleted ${swept} stored parts of uploads that never became a contact import`);
    }
    let written = 0;
    for (;;) {
      const due = await this.jobs.claimDue(this.config.CONTACT_IMPORT_LEASE_SECONDS);
      if (!due) return written;
      written += await this.run(due);
      if (this.job.isStopped) return written;
    }
  }

  /** Writes the import's parts from its cursor on; a failure is counted against the import (and the pass goes on to the next). */
  private async run(job: ImportJob): Promise<number> {
    let cursor = job.cursor;
    try {
      const seen = await this.addressesBefore(job);
      let reported = job.reported;
      for (; cursor < job.chunks; cursor++) {
        if (this.job.isStopped) {
          await this.jobs.release(job.id);
          return cursor - job.cursor;
        }
        const chunk = await this.jobs.chunk(job.id, cursor);
        if (!chunk) throw new Error(`contact import ${job.id} has no stored part ${cursor}`);
        const rows = readChunk(chunk, job.plan, seen);
        const rejected = rows.rejected.slice(0, Math.max(0, MAX_REPORTED_ROWS - reported));
        await this.imports.transaction((tx) => this.writeChunk(tx, job, cursor, rows, rejected));
        reported += rejected.length;
      }
      if (await this.jobs.finish(job.id, cursor)) this.logger.log(`contact import ${job.id} completed`);
    } catch (error) {
      await this.failed(job, cursor, error);
    }
    return cursor - job.cursor;
  }

  /** A part that did not commit: another process has the import, or it is tried again a lease later (up to MAX_ATTEMPTS in a row). */
  private async failed(job: ImportJob, cursor: number, error: unknown): Promise<void> {
    if (error instanceof ImportCursorMoved) {
      this.logger.warn(error.message);
      return;
    }
    const retry = this.config.CONTACT_IMPORT_LEASE_SECONDS;
    if (await this.jobs.attemptFailed(job.id, cursor, FAILED, MAX_ATTEMPTS, retry)) {
      this.logger.error(`contact import ${job.id} failed at part ${cursor} of ${job.chunks}: ${String(error)}`);
    } else {
      this.logger.warn(`contact import ${job.id}: part ${cursor} failed, tried again in ${retry} s: ${String(error)}`);
    }
  }

  /** One part, in its transaction: the cursor checked and held, the contacts written, the counts and the cursor moved. */
  private async writeChunk(tx: Transaction, job: ImportJob, from: number, rows: ChunkRows, rejected: ChunkRows['rejected']): Promise<void> {
    await this.jobs.hold(tx, job.id, from);
    const { teamId } = job;
    const created = await this.imports.createNew(teamId, rows.contacts, tx);
    const rest = rows.contacts.filter((r) => !created.has(r.email));
    const updated = job.onConflict === 'upsert' ? await this.imports.updateExisting(teamId, rest, tx) : new Map<string, string>();
    await this.imports.addMemberships(teamId, [...created.values(), ...updated.values()], job.segmentIds, job.topics, tx);
    const skipped = rest.length - updated.size + rows.duplicates;
    await this.jobs.advance(
      tx,
      job.id,
      { created: created.size, updated: updated.size, skipped, failed: rows.failed, rejected },
      this.config.CONTACT_IMPORT_LEASE_SECONDS,
    );
  }

  /** The addresses of the parts written already (a resumed import), with their line: a later row repeating one is refused. */
  private async addressesBefore(job: ImportJob): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    for (let seq = 0; seq < job.cursor; seq++) {
      const chunk = await this.jobs.chunk(job.id, seq);
      if (!chunk) throw new Error(`contact import ${job.id} has no stored part ${seq}`);
      readChunk(chunk, job.plan, seen);
    }
    return seen;
  }
}
