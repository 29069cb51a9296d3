import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The MIME message of an email submitted over SMTP, as the client sent it minus the headers
 * Herald strips (Bcc, Herald-/Resend-Idempotency-Key, Return-Path) and with Message-ID and Date
 * added when the client left them out. The worker DKIM-signs and sends these bytes instead of
 * building a message from the email's fields. API emails have no row here. STORAGE EXTERNAL:
 * MIME is mostly base64 already, so compressing it costs CPU for little.
 */
export class SmtpMessages1764700000000 implements MigrationInterface {
  name = 'SmtpMessages1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE email_mime (
        email_id uuid PRIMARY KEY REFERENCES emails(id) ON DELETE CASCADE,
        mime bytea NOT NULL
      )`);
    await q.query(`ALTER TABLE email_mime ALTER COLUMN mime SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS email_mime`);
  }
}
