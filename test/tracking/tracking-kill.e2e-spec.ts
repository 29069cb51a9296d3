import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EmailStore } from '@herald/messages';
import { TrackingKeys } from '@herald/tracking';
import { startTestApi, type TestApi } from '../support/api-harness';
import { newEmailRow, normalizedEmail } from '../support/email-rows';
import { envOf, startApiProcess, type ApiProcess } from '../support/herald-process';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(120_000);

const CLICKS = 300;
const READER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

/**
 * An answered click is not lost when the api that answered it dies before recording it: the hit
 * is on the region's tracking stream, and another api of the region (sharing the recorder's
 * durable) records it once the dead one's delivery times out. A `herald api` child answers a burst
 * of clicks and is killed (SIGKILL) the moment the last answer arrives; every answered click
 * then becomes exactly one `email.clicked` event, the first of each recipient's link unique.
 */
describe('tracking: kill -9 of the api that answered the clicks', () => {
  const key = randomBytes(32);
  let survivor: TestApi;
  let doomed: ApiProcess | undefined;
  let db: DataSource;

  beforeAll(async () => {
    survivor = await startTestApi({ TRACKING_KEYS: key.toString('base64') });
    db = survivor.app.get(DataSource);
  });

  afterAll(async () => {
    await doomed?.stop('SIGKILL');
    await survivor?.close();
  });

  it('records every answered click exactly once, through a surviving api', async () => {
    const team = await survivor.team();
    const rows = Array.from({ length: 10 }, () => newEmailRow(team.teamId, normalizedEmail(team.from('hello'), team.domain)));
    await survivor.app.get(EmailStore).insert(rows);
    const keys = TrackingKeys.of([key]);
    const signedAt = new Date(Date.now() - 3_600_000);
    const tokens = Array.from({ length: CLICKS }, (_, i) =>
      keys.sign({ kind: 'click', emailId: rows[i % rows.length]!.id, position: 0, signedAt, link: i % 3, url: `https://shop.example/${i % 3}` }),
    );

    doomed = await startApiProcess(envOf(survivor.config, { TRACKING_KEYS: key.toString('base64') }));
    const answers = await Promise.all(
      tokens.map((t) => fetch(`${doomed!.url}/t/c/${t}`, { redirect: 'manual', headers: { 'user-agent': READER } }).then((r) => r.status)),
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect(answers.every((status) => status === 302)).toBe(true);

    const ids = rows.map((r) => r.id);
    const clicks = async () =>
      (
        await db.query<{ n: number; unique: number }[]>(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE (data->'tracking'->>'unique')::boolean)::int AS unique
             FROM email_events WHERE type = 'email.clicked' AND email_id = ANY($1)`,
          [ids],
        )
      )[0]!;
    const atKill = (await clicks()).n;
    // The killed process's unacknowledged messages come back after the consumer's ack wait (30 s).
    await waitUntil(`${CLICKS} clicks recorded (${atKill} when the api died)`, async () => (await clicks()).n >= CLICKS, 60_000, 250);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // 10 emails × 3 links: one unique first click each.
    expect(await clicks()).toEqual({ n: CLICKS, unique: 30 });
    const { last } = (await db.query<{ last: string }[]>(`SELECT DISTINCT last_event AS last FROM emails WHERE id = ANY($1)`, [ids]))[0]!;
    expect(last).toBe('clicked');
    process.stdout.write(`tracking kill: ${atKill} of ${CLICKS} answered clicks were recorded when the api died; all ${CLICKS} after\n`);
  });
});
