import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contacts, segments, topics and contact properties (issue 18, API.md §11). One contact per
 * team and address (`email` lowercased whole, as suppressions are). A contact's custom values
 * live in `properties` (key → string or number), typed and given fallbacks by the team's
 * `contact_properties`. Segment memberships and topic subscriptions are rows of their own, so a
 * broadcast pages through a segment by contact id and reads each member's subscription in one
 * query. CSV imports keep their counts and their rejected rows.
 */
export class Contacts1765540000000 implements MigrationInterface {
  name = 'Contacts1765540000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contacts (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        email text NOT NULL CHECK (email = lower(email)),
        first_name text,
        last_name text,
        unsubscribed boolean NOT NULL DEFAULT false,
        properties jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (team_id, email)
      )`);
    await q.query(`CREATE INDEX contacts_team_idx ON contacts (team_id, created_at DESC, id DESC)`);
    // The dashboard's search by the start of an address.
    await q.query(`CREATE INDEX contacts_team_email_prefix_idx ON contacts (team_id, email text_pattern_ops)`);

    await q.query(`
      CREATE TABLE contact_properties (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        key text NOT NULL,
        type text NOT NULL CHECK (type IN ('string', 'number')),
        fallback_value jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (team_id, key)
      )`);
    await q.query(`CREATE INDEX contact_properties_team_idx ON contact_properties (team_id, created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE segments (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX segments_team_idx ON segments (team_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE segment_contacts (
        segment_id uuid NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
        contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (segment_id, contact_id)
      )`);
    await q.query(`CREATE INDEX segment_contacts_contact_idx ON segment_contacts (contact_id)`);

    await q.query(`
      CREATE TABLE topics (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        default_subscription text NOT NULL CHECK (default_subscription IN ('opt_in', 'opt_out')),
        visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX topics_team_idx ON topics (team_id, created_at DESC, id DESC)`);
    // A contact's explicit choice; without a row the topic's default_subscription holds.
    await q.query(`
      CREATE TABLE contact_topics (
        contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        topic_id uuid NOT NULL REFERENCES topics(id) ON DELETE CASCADE,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        subscription text NOT NULL CHECK (subscription IN ('opt_in', 'opt_out')),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (contact_id, topic_id)
      )`);
    await q.query(`CREATE INDEX contact_topics_topic_idx ON contact_topics (topic_id)`);

    await q.query(`
      CREATE TABLE contact_imports (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed', 'failed')),
        on_conflict text NOT NULL CHECK (on_conflict IN ('upsert', 'skip')),
        total integer NOT NULL DEFAULT 0,
        created integer NOT NULL DEFAULT 0,
        updated integer NOT NULL DEFAULT 0,
        skipped integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        rejected_rows jsonb NOT NULL DEFAULT '[]'::jsonb,
        error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX contact_imports_team_idx ON contact_imports (team_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['contact_imports', 'contact_topics', 'topics', 'segment_contacts', 'segments', 'contact_properties', 'contacts']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
