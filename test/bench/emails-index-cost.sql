-- What each index of `emails` costs per row, to insert and to update (test/bench/README.md,
-- broadcasts). Run on a quiet machine:
--   psql -h 127.0.0.1 -U postgres herald -q -f test/bench/emails-index-cost.sql
-- In a scratch schema, dropped at the end: one table per variant, each with the columns of
-- `emails`, the indexes it always had (primary key, team feed, lease) and one index under test.
-- `base` gets 100,000 generated rows; each other table is filled from it (INSERT … SELECT *), then
-- updated once (last_event and dispatch_at, as a claim does). A variant's times minus
-- `base_again`'s (no index under test), divided by 100,000, are its index's cost per row.
\set ON_ERROR_STOP 1
DROP SCHEMA IF EXISTS emails_index_cost CASCADE;
CREATE SCHEMA emails_index_cost;
SET search_path = emails_index_cost;
CREATE TABLE base (
  id uuid PRIMARY KEY, team_id uuid NOT NULL, region text NOT NULL, source text NOT NULL CHECK (source IN ('api', 'smtp')),
  from_address text NOT NULL, to_addresses text[] NOT NULL, cc_addresses text[], bcc_addresses text[], reply_to text[],
  subject text NOT NULL, html text, text_body text, headers jsonb, tags jsonb, message_id text NOT NULL, last_event text NOT NULL,
  scheduled_at timestamptz, dispatch_at timestamptz, idempotency_key text, created_at timestamptz NOT NULL DEFAULT now(),
  last_event_at timestamptz, dispatch_count integer NOT NULL DEFAULT 0, api_key_id uuid, broadcast_id uuid,
  template_id uuid, template_values jsonb, dispatch_called boolean NOT NULL DEFAULT false
);
CREATE INDEX ON base (region, dispatch_at) WHERE dispatch_at IS NOT NULL;
CREATE INDEX ON base (team_id, created_at DESC, id DESC);
CREATE TABLE subject_gin (LIKE base INCLUDING ALL);
CREATE INDEX ON subject_gin USING gin (to_tsvector('simple', subject));
CREATE TABLE from_domain_expression (LIKE base INCLUDING ALL);
CREATE INDEX ON from_domain_expression (team_id, lower(substring(from_address from '@([^@<>[:space:]]+)>?[[:space:]]*$')), created_at DESC, id DESC);
CREATE TABLE base_again (LIKE base INCLUDING ALL);
CREATE TABLE last_event (LIKE base INCLUDING ALL);
CREATE INDEX ON last_event (team_id, last_event, created_at DESC, id DESC);
\timing on
\echo base
INSERT INTO base (id, team_id, region, source, from_address, to_addresses, subject, html, message_id, last_event, dispatch_at)
SELECT gen_random_uuid(), '00000000-0000-0000-0000-000000000001', 'us-east-1', 'api', 'Acme <news@mail.acme.com>', ARRAY['user' || g || '@example.com'],
       'Your weekly report number ' || g || ' is ready to read', '<p>hi</p>', g || '@acme', 'queued', now() FROM generate_series(1, 100000) g;
UPDATE base SET last_event = 'sent', dispatch_at = now() + interval '1 minute';
\echo subject_gin
INSERT INTO subject_gin SELECT * FROM base;
UPDATE subject_gin SET last_event = 'delivered', dispatch_at = now() + interval '1 minute';
\echo from_domain_expression
INSERT INTO from_domain_expression SELECT * FROM base;
UPDATE from_domain_expression SET last_event = 'delivered', dispatch_at = now() + interval '1 minute';
\echo last_event
INSERT INTO last_event SELECT * FROM base;
UPDATE last_event SET last_event = 'delivered', dispatch_at = now() + interval '1 minute';
\echo base_again (no more indexes than base, filled as the others are: their baseline)
INSERT INTO base_again SELECT * FROM base;
UPDATE base_again SET last_event = 'delivered', dispatch_at = now() + interval '1 minute';
\timing off
DROP SCHEMA emails_index_cost CASCADE;
