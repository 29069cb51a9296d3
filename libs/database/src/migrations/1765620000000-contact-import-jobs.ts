import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CSV imports of contacts run in the background (libs/contacts' ContactImportRunner): the upload
 * is stored as it arrives, in chunks of whole records (contact_import_chunks, deleted when the
 * import ends; no foreign key, as the import row is written once the whole upload is stored and
 * checked: chunks of an upload that never became an import are swept by age), and
 * the import row keeps what the runner needs to read them (the column plan, the segments and
 * topics to join), how far it got (`cursor`: the chunks committed, each with its contacts in one
 * transaction) and who holds it (`lease_until`). Imports left unfinished by the synchronous
 * version have no stored file to resume from: they are marked failed.
 */
export class ContactImportJobs1765620000000 implements MigrationInterface {
  name = 'ContactImportJobs1765620000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE contact_imports
        ADD COLUMN plan jsonb,
        ADD COLUMN segment_ids uuid[] NOT NULL DEFAULT '{}',
        ADD COLUMN topics jsonb NOT NULL DEFAULT '[]'::jsonb,
        ADD COLUMN chunks integer NOT NULL DEFAULT 0,
        ADD COLUMN cursor integer NOT NULL DEFAULT 0,
        ADD COLUMN attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN lease_until timestamptz`);
    await q.query(`
      UPDATE contact_imports SET status = 'failed', completed_at = now(), error = 'The import stopped before it finished.'
       WHERE status IN ('queued', 'in_progress')`);
    await q.query(`CREATE INDEX contact_imports_due_idx ON contact_imports (created_at) WHERE status IN ('queued', 'in_progress')`);
    await q.query(`
      CREATE TABLE contact_import_chunks (
        import_id uuid NOT NULL,
        seq integer NOT NULL,
        first_line integer NOT NULL,
        records integer NOT NULL,
        data text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (import_id, seq)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS contact_import_chunks`);
    await q.query(`DROP INDEX IF EXISTS contact_imports_due_idx`);
    await q.query(`
      ALTER TABLE contact_imports DROP COLUMN plan, DROP COLUMN segment_ids, DROP COLUMN topics, DROP COLUMN chunks, DROP COLUMN cursor,
        DROP COLUMN attempts, DROP COLUMN lease_until`);
  }
}
