import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bodies stored once for many emails (issue 18's fan-out): a broadcast's html and text as a
 * template with holes (`email_templates`, parts as a JSON array of strings and value indexes),
 * and per email only its values (`emails.template_values`) and which template
 * (`emails.template_id`); the body is filled in when it is read (libs/messages
 * email-template.ts). A 100,000-contact broadcast wrote 100,000 copies of its kilobyte of HTML.
 * No foreign key from emails: a template is written before its emails, in their statement, and
 * never deleted but with its team.
 */
export class EmailTemplates1765600000000 implements MigrationInterface {
  name = 'EmailTemplates1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE email_templates (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        html jsonb,
        text_body jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`ALTER TABLE emails ADD COLUMN template_id uuid, ADD COLUMN template_values jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails DROP COLUMN IF EXISTS template_values, DROP COLUMN IF EXISTS template_id`);
    await q.query(`DROP TABLE IF EXISTS email_templates`);
  }
}
