import { jetstreamManager, jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { eventsStreamName, eventSubject } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { emailEvent, EmailStore, ONCE_PER_EMAIL, toHeraldEvent, type EmailEventRecord, type EmailFacts } from '@herald/messages';
import type { TestApi, TestTeam } from './api-harness';
import { newEmailRow, normalizedEmail } from './email-rows';
import { METRICS_DURABLE } from '../../apps/metrics/src/metrics.app';

/*
 * What the metrics suites share: emails and their events written as the engine writes them
 * (email_events is the record a recount reads), published to the region's events stream, and the
 * rollups next to a recount of the stored events.
 */

const HOUR_MS = 3_600_000;
/** The same expression as FROM_DOMAIN_SQL (libs/messages): the recount does not share the consumer's code. */
const FROM_DOMAIN_SQL = `lower(substring(data->>'from' from '@([^@<>[:space:]]+)>?[[:space:]]*$'))`;
const n = `cardinality(recipients)`;
const tracked = (type: string, machine: boolean, unique: boolean) =>
  `sum(${n}) FILTER (WHERE type = '${type}' AND (data->'tracking'->>'machine')::boolean = ${machine}${unique ? ` AND (data->'tracking'->>'unique')::boolean` : ''})`;

/** Every counter of metric_rollups, recounted from email_events by SQL of its own. */
const RECOUNT = {
  sent: `sum(${n}) FILTER (WHERE type = 'email.sent')`,
  delivered: `sum(${n}) FILTER (WHERE type = 'email.delivered')`,
  delivery_delayed: `sum(${n}) FILTER (WHERE type = 'email.delivery_delayed')`,
  bounced_hard: `sum(${n}) FILTER (WHERE type = 'email.bounced' AND data->'bounce'->>'type' = 'Permanent')`,
  bounced_soft: `sum(${n}) FILTER (WHERE type = 'email.bounced' AND data->'bounce'->>'type' <> 'Permanent')`,
  complained: `sum(${n}) FILTER (WHERE type = 'email.complained')`,
  suppressed: `sum(${n}) FILTER (WHERE type = 'email.suppressed')`,
  failed: `sum(${n}) FILTER (WHERE type = 'email.failed')`,
  opened_human: tracked('email.opened', false, false),
  opened_human_unique: tracked('email.opened', false, true),
  opened_machine: tracked('email.opened', true, false),
  opened_machine_unique: tracked('email.opened', true, true),
  clicked_human: tracked('email.clicked', false, false),
  clicked_human_unique: tracked('email.clicked', false, true),
  clicked_machine: tracked('email.clicked', true, false),
  clicked_machine_unique: tracked('email.clicked', true, true),
};
const COUNTERS = Object.keys(RECOUNT);

export type RollupRow = Record<string, string | number>;

/** The rows of metric_rollups, in a stable order, counters as numbers. */
export async function rollupRows(db: Client): Promise<RollupRow[]> {
  const { rows } = await db.query(
    `SELECT team_id::text, domain, region, to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour, ${COUNTERS.map((c) => `${c}::int`).join(', ')}
     FROM metric_rollups ORDER BY 1, 2, 3, 4`,
  );
  return rows;
}

/** The same rows recounted from the stored events (email_events). */
export async function recountRows(db: Client): Promise<RollupRow[]> {
  const { rows } = await db.query(
    `SELECT team_id::text, ${FROM_DOMAIN_SQL} AS domain, region, to_char(date_trunc('hour', created_at, 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour,
            ${Object.entries(RECOUNT)
              .map(([c, sql]) => `coalesce(${sql}, 0)::int AS ${c}`)
              .join(', ')}
     FROM email_events WHERE type <> 'email.scheduled' GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
  );
  return rows;
}

export async function schemaClient(config: HeraldConfig): Promise<Client> {
  const db = new Client({ connectionString: config.DATABASE_URL });
  await db.connect();
  await db.query(`SET search_path TO "${config.DATABASE_SCHEMA}"`);
  return db;
}

/** `count` emails of the team, committed as the send path commits them; answers their facts. */
export async function seedEmails(api: TestApi, team: TestTeam, count: number, recipients = 1): Promise<EmailFacts[]> {
  const store = api.app.get(EmailStore);
  const facts: EmailFacts[] = [];
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => {
      const to = Array.from({ length: recipients }, (__, r) => `user${i + j}.${r}@inbox.test`);
      return newEmailRow(
        team.teamId,
        normalizedEmail(`Acme <${team.from('news')}>`, team.domain, { to, recipients: to.map((address) => ({ kind: 'to' as const, address })) }),
      );
    });
    await store.insert(rows);
    for (const row of rows) {
      facts.push({
        id: row.id,
        teamId: row.teamId,
        region: row.region,
        from: row.email.from,
        subject: row.email.subject,
        messageId: `<${row.id}@herald.test>`,
        tags: null,
        headers: null,
        createdAt: new Date(),
      });
    }
  }
  return facts;
}

/**
 * A mixed history for each email, spread over the last 30 hours: sent, then delivered, bounced
 * (hard or soft), delayed, complained, suppressed or failed, and opens and clicks of people and
 * machines with the contract's `tracking` field (first ones unique). Deterministic per index.
 */
export function mixedEvents(emails: EmailFacts[], now = Date.now()): EmailEventRecord[] {
  const events: EmailEventRecord[] = [];
  emails.forEach((email, i) => {
    const to = [`user${i}.0@inbox.test`];
    const at = (k: number) => new Date(now - ((i * 7_919_000) % (30 * HOUR_MS)) + k * 1000);
    const add = (type: Parameters<typeof emailEvent>[0], k: number, seed: string, extra: Record<string, unknown> = {}) =>
      events.push(emailEvent(type, email, to, at(k), seed, extra as never));
    add('email.sent', 0, ONCE_PER_EMAIL);
    const fate = i % 20;
    if (fate === 0)
      add('email.bounced', 1, 'b', {
        bounce: { type: 'Permanent', subType: 'General', message: 'no such user', diagnosticCode: ['smtp; 550 5.1.1'] },
      });
    else if (fate === 1)
      add('email.bounced', 1, 'b', { bounce: { type: 'Transient', subType: 'MailboxFull', message: 'full', diagnosticCode: ['smtp; 452 4.2.2'] } });
    else if (fate === 2)
      add('email.suppressed', 1, 's', {
        suppressed: { type: 'OnAccountSuppressionList', reason: 'previous_bounce', message: 'x', diagnosticCode: [] },
      });
    else if (fate === 3) add('email.failed', 1, 'f', { failed: { reason: 'no_dkim_key' } });
    else {
      if (fate === 4) add('email.delivery_delayed', 1, ONCE_PER_EMAIL);
      add('email.delivered', 2, 'd');
      if (fate === 5) add('email.complained', 3, 'c');
      const opens = i % 3;
      for (let o = 0; o < opens; o++) {
        const machine = (i + o) % 4 === 0;
        add('email.opened' as never, 4 + o, `o${o}`, {
          open: { ipAddress: '203.0.113.9', userAgent: 'x', timestamp: at(4 + o).toISOString() },
          tracking: { machine, reason: machine ? 'apple_privacy' : null, unique: o === 0 },
        });
      }
      if (i % 4 === 1) {
        add('email.clicked' as never, 9, 'k0', {
          click: { link: 'https://acme.test/a', ipAddress: '203.0.113.9', userAgent: 'x', timestamp: at(9).toISOString() },
          tracking: { machine: false, reason: null, unique: true },
        });
        add('email.clicked' as never, 10, 'k1', {
          click: { link: 'https://acme.test/a', ipAddress: '203.0.113.9', userAgent: 'x', timestamp: at(10).toISOString() },
          tracking: { machine: i % 8 === 1, reason: i % 8 === 1 ? 'link_scanner' : null, unique: i % 8 === 1 },
        });
      }
    }
  });
  return events;
}

/** Writes events to email_events as the engine does (the record a recount reads). */
export async function storeEvents(db: Client, events: EmailEventRecord[]): Promise<void> {
  for (let i = 0; i < events.length; i += 2000) {
    const chunk = events.slice(i, i + 2000);
    await db.query(
      `INSERT INTO email_events (id, email_id, team_id, region, type, recipients, data, created_at)
       SELECT u.id, u.email_id, u.team_id, u.region, u.type, ARRAY(SELECT jsonb_array_elements_text(u.recipients)), u.data, u.created_at
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::jsonb[], $8::timestamptz[])
              AS u(id, email_id, team_id, region, type, recipients, data, created_at)`,
      [
        chunk.map((e) => e.id),
        chunk.map((e) => e.emailId),
        chunk.map((e) => e.teamId),
        chunk.map((e) => e.region),
        chunk.map((e) => e.type),
        chunk.map((e) => JSON.stringify(e.recipients)),
        chunk.map((e) => JSON.stringify(e.data)),
        chunk.map((e) => e.createdAt.toISOString()),
      ],
    );
  }
}

/**
 * Puts events on their region's events stream. `msgIdSuffix` makes the stream take them again
 * (a producer republishing after its dedupe window): the same events twice on the stream.
 */
export async function publishEvents(config: HeraldConfig, events: EmailEventRecord[], msgIdSuffix = ''): Promise<void> {
  const nc = await connect({ servers: config.NATS_URL });
  try {
    // Acks may take seconds on a busy machine (the shared NATS serves the other suites too): a
    // publish waits up to 30 s for its ack, 200 at a time.
    const js = jetstream(nc, { timeout: 30_000 });
    for (let i = 0; i < events.length; i += 200) {
      await Promise.all(
        events
          .slice(i, i + 200)
          .map((e) =>
            js.publish(eventSubject(config.NATS_NAMESPACE, e.region, e.type), JSON.stringify(toHeraldEvent(e)), { msgID: `${e.id}${msgIdSuffix}` }),
          ),
      );
    }
  } finally {
    await nc.close();
  }
}

export interface MetricsConsumerState {
  pending: number;
  ackPending: number;
  redelivered: number;
}

/** The region's metrics durable, as the server sees it; null before the role made it. */
export async function metricsConsumerState(config: HeraldConfig, region = config.HERALD_REGION): Promise<MetricsConsumerState | null> {
  const nc = await connect({ servers: config.NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.consumers.info(eventsStreamName(config.NATS_NAMESPACE, region), METRICS_DURABLE).catch(() => null);
    return info && { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
  } finally {
    await nc.close();
  }
}

/** Deletes the metrics durable: the next metrics process makes it again and replays the whole stream. */
export async function deleteMetricsConsumer(config: HeraldConfig, region = config.HERALD_REGION): Promise<void> {
  const nc = await connect({ servers: config.NATS_URL });
  try {
    await (await jetstreamManager(nc)).consumers.delete(eventsStreamName(config.NATS_NAMESPACE, region), METRICS_DURABLE);
  } finally {
    await nc.close();
  }
}
