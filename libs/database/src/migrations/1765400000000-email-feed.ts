import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the dashboard's Emails page (issue 13): each filter, kept in the list's keyset
 * order (team, newest first), so a page of a team with a million emails reads a page of index
 * entries, not the team's emails. The sending-domain expression must stay identical to
 * FROM_DOMAIN_SQL in libs/messages/src/email-feed.repository.ts, or the planner will not use it.
 */
export class EmailFeed1765400000000 implements MigrationInterface {
  name = 'EmailFeed1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX emails_team_last_event_idx ON emails (team_id, last_event, created_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX emails_team_from_domain_idx ON emails (team_id, (lower(substring(from_address from '@([^@<>[:space:]]+)>?[[:space:]]*$'))), created_at DESC, id DESC)`,
    );
    // Search by recipient: the few emails of one address, then their team is checked.
    await q.query(`CREATE INDEX email_recipients_address_idx ON email_recipients (lower(address))`);
    // Search by words of the subject (built-in full text, 'simple': no stemming, any language).
    await q.query(`CREATE INDEX emails_subject_words_idx ON emails USING gin (to_tsvector('simple', subject))`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['emails_subject_words_idx', 'email_recipients_address_idx', 'emails_team_from_domain_idx', 'emails_team_last_event_idx']) {
      await q.query(`DROP INDEX IF EXISTS ${index}`);
    }
  }
}
