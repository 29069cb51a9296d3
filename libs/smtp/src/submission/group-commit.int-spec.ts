import { Client } from 'pg';
import type { Principal } from '@herald/accounts';
import { eventually, startPrivatePostgres, type PrivatePostgres } from '@herald/testing';
import type { TestTeam } from '../../../../test/support/api-harness';
import { authenticated, compose, startSubmissionSuite, type SubmissionSuite } from '../../../../test/support/smtp-submissions';
import type { SmtpSubmissionPort, SubmissionResult } from '../submission-port';

jest.setTimeout(60_000);

/**
 * The relay's messages share commits (SendService → EmailWriter, the API's group commit): the
 * messages of concurrent sessions go in one statement while others run. On a Postgres of this
 * suite's own, killed while messages are in flight: a message answered 250 is stored, whichever
 * group it was in; the others get a temporary 451, so their clients keep them and retry.
 */
describe('SMTP submissions: group commit', () => {
  let postgres: PrivatePostgres;
  let suite: SubmissionSuite;
  let smtp: SmtpSubmissionPort;
  let team: TestTeam;
  let principal: Principal;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    suite = await startSubmissionSuite({ DATABASE_URL: postgres.url });
    smtp = suite.smtp;
    team = await suite.api.team({ plan: 'scale-2.5m' });
    principal = await authenticated(smtp, team.token);
  });

  afterAll(async () => {
    await suite?.close();
    await postgres?.stop();
  });

  /** Rows of `emails` among these ids, and how many transactions wrote them (rows of one transaction share xmin). */
  async function stored(ids: string[]): Promise<{ rows: number; transactions: number }> {
    const client = new Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const schema = suite.api.config.DATABASE_SCHEMA;
      const { rows } = await client.query<{ rows: string; transactions: string }>(
        `SELECT count(*) AS rows, count(DISTINCT xmin::text) AS transactions FROM "${schema}".emails WHERE id = ANY($1::uuid[])`,
        [ids],
      );
      return { rows: Number(rows[0].rows), transactions: Number(rows[0].transactions) };
    } finally {
      await client.end();
    }
  }

  const submitMany = async (n: number, tag: string): Promise<Promise<SubmissionResult>[]> => {
    const messages = await Promise.all(
      Array.from({ length: n }, (_, i) => compose({ from: team.from(), to: `${tag}${i}@example.com`, subject: `${tag} ${i}`, text: 'x' })),
    );
    return messages.map((raw, i) => smtp.submit(principal, { mailFrom: team.from(), rcptTo: [`${tag}${i}@example.com`] }, raw));
  };
  const idsOf = (results: SubmissionResult[]) => results.flatMap((r) => (r.ok ? [r.id] : []));

  it('commits the messages of concurrent sessions together', async () => {
    const results = await Promise.all(await submitMany(40, 'together'));
    const ids = idsOf(results);
    expect(ids).toHaveLength(40);
    const { rows, transactions } = await stored(ids);
    expect(rows).toBe(40);
    expect(transactions).toBeLessThan(40);
  });

  it('a Postgres crash among in-flight groups: every 250 is stored, every other answer is a temporary 451', async () => {
    const watcher = new Client({ connectionString: postgres.url });
    watcher.on('error', () => undefined);
    await watcher.connect();
    // Each insert of emails takes 300 ms more (this suite's own schema and server): the groups
    // are in flight long enough to crash the server under one of them.
    const schema = suite.api.config.DATABASE_SCHEMA;
    await watcher.query(
      `CREATE FUNCTION "${schema}".slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$`,
    );
    await watcher.query(
      `CREATE TRIGGER slow_insert AFTER INSERT ON "${schema}".emails FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".slow_insert()`,
    );
    const pending = await submitMany(80, 'crash');
    // The first groups commit and are answered; the server is frozen, then killed, while the next one
    // runs (sleeps in its trigger).
    await Promise.race(pending);
    for (let running = 0; !running;) {
      const { rows } = await watcher.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep'`);
      running = rows[0].n;
    }
    postgres.pause();
    await postgres.kill();
    await watcher.end().catch(() => undefined);
    const results = await Promise.all(pending);
    await postgres.restart();

    const ids = idsOf(results);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(80);
    for (const r of results) if (!r.ok) expect(r.reply).toMatchObject({ code: 451 });
    await eventually(async () => expect((await stored(ids)).rows).toBe(ids.length), 20_000);
  });
});
