import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A large message relayed over SMTP, stored as its DATA arrives (libs/smtp's MimeSpool): its body
 * in chunks of about a megabyte, so the smtp role never holds the whole of it. The statement that
 * commits the email joins the chunks into its email_mime row and deletes them, so the chunks are
 * only ever read there. UNLOGGED: a chunk is worth nothing until that commit, which writes the
 * message to the WAL once, in email_mime; after a Postgres crash the table is empty, and an email
 * whose chunks are gone fails its commit (the client is answered 451 and sends again). Uploads a
 * crashed smtp process left behind are deleted by age (MimeUploads.sweep).
 */
export class MimeUploads1765605000000 implements MigrationInterface {
  name = 'MimeUploads1765605000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNLOGGED TABLE email_mime_uploads (
        upload_id uuid NOT NULL,
        seq integer NOT NULL,
        data bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (upload_id, seq)
      )`);
    // MIME bodies are mostly base64: compressing a chunk costs CPU for little (as email_mime.mime)
    await q.query(`ALTER TABLE email_mime_uploads ALTER COLUMN data SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS email_mime_uploads`);
  }
}
