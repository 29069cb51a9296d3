import { ContactImportRunner } from '@herald/contacts';
import { DataSource } from 'typeorm';
import { startTestApi, type TestApi } from '../support/api-harness';
import { finishedImport } from '../support/contact-imports';
import { envOf, startApiProcess, type ApiProcess } from '../support/herald-process';

jest.setTimeout(240_000);

const ROWS = 20_000;
/** Small parts: many commits, so the kill lands between two of them even on a fast machine. */
const CHUNK_ROWS = 100;
const LEASE_SECONDS = 2;
const bad = (i: number) => i % 500 === 499;
/** Row 15,000 repeats row 3's address (in a part the second process writes). */
const REPEAT = 15_000;
const PACE = { CONTACT_IMPORT_CHUNK_ROWS: String(CHUNK_ROWS), CONTACT_IMPORT_LEASE_SECONDS: String(LEASE_SECONDS) };
/** Kills, each once the process writing the import has committed this many parts of its own. */
const KILLS = 2;
const PARTS_BEFORE_KILL = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * kill -9 of the api process writing a 20,000-row CSV import (`herald api` as a real child
 * process, run from dist/: `npm run build` first), once it has committed a few parts, then of the
 * one that took it over; each time a new one takes the import over when the dead one's lease runs
 * out and goes on from the last committed part. Every row is written exactly once (a part written twice would count its rows
 * as updated, and duplicate its rejected rows), none is skipped, and no contact event is
 * recorded (imports announce none, as at Resend).
 */
describe('fault: kill -9 the api in the middle of a contact import', () => {
  let api: TestApi;
  let child: ApiProcess | null = null;

  beforeAll(async () => {
    api = await startTestApi(PACE);
    // Only the child processes write imports: the in-process api serves the test's reads.
    await api.app.get(ContactImportRunner).stop();
    child = await startApiProcess(envOf(api.config, PACE));
  });
  afterAll(async () => {
    await child?.stop('SIGKILL');
    await api?.close();
  });

  it('finishes the import after two kills, each row written once', async () => {
    const db = api.app.get(DataSource);
    const team = await api.team();
    const segment = (await team.resend.segments.create({ name: 'Imported' })).data!.id;
    const rows = Array.from({ length: ROWS }, (_, i) =>
      bad(i) ? `broken-${i},B` : i === REPEAT ? 'k3@import.example,Again' : `k${i}@import.example,K${i}`,
    );
    const form = new FormData();
    form.append('file', new Blob([['email,first_name', ...rows].join('\n')], { type: 'text/csv' }), 'contacts.csv');
    form.append('segments', JSON.stringify([{ id: segment }]));
    const taken = await fetch(`${child!.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${team.token}` }, body: form });
    expect(taken.status).toBe(202);
    const { id } = (await taken.json()) as { id: string };

    const progress = async () =>
      (await db.query(`SELECT status, cursor, chunks FROM contact_imports WHERE id = $1`, [id]))[0] as {
        status: string;
        cursor: number;
        chunks: number;
      };
    // Each kill lands once the process writing the import (the first, then the one that took it
    // over) has committed parts of its own; it is most likely inside the next part's transaction.
    const killedAt: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const from = (await progress()).cursor;
      const deadline = Date.now() + 60_000;
      let now = await progress();
      while (now.cursor < from + PARTS_BEFORE_KILL) {
        if (Date.now() > deadline) throw new Error(`the import did not go on from part ${from}: ${JSON.stringify(now)}`);
        await sleep(2);
        now = await progress();
      }
      child!.child.kill('SIGKILL');
      expect((await child!.exited)[1]).toBe('SIGKILL');
      const left = await progress();
      // Killed mid-way: some parts committed, not all.
      expect(left).toMatchObject({ status: 'in_progress', chunks: ROWS / CHUNK_ROWS });
      expect(left.cursor).toBeLessThan(left.chunks);
      killedAt.push(left.cursor);
      child = await startApiProcess(envOf(api.config, PACE));
    }
    const report = await finishedImport(team.resend, id, 120_000, 100);
    const failed = rows.filter((_, i) => bad(i)).length;
    expect(report).toMatchObject({ status: 'completed', counts: { total: ROWS, created: ROWS - failed - 1, updated: 0, skipped: 1, failed } });
    const rejected = (report as unknown as { rejected_rows: { line: number; email: string | null; reason: string }[] }).rejected_rows;
    expect(rejected.map((r) => r.line)).toEqual([...new Set(rejected.map((r) => r.line))].sort((x, y) => x - y));
    expect(rejected.filter((r) => r.email !== null)).toEqual([
      { line: REPEAT + 2, email: 'k3@import.example', reason: `The address appears on line ${3 + 2} already.` },
    ]);
    expect(rejected).toHaveLength(failed + 1);

    const expected = rows.filter((_, i) => !bad(i) && i !== REPEAT).map((row) => row.split(',')[0]);
    const stored = (await db.query(`SELECT email FROM contacts WHERE team_id = $1 ORDER BY email`, [team.teamId])) as { email: string }[];
    expect(stored.map((c) => c.email)).toEqual([...expected].sort());
    const members = (await db.query(`SELECT count(*)::int AS n FROM segment_contacts WHERE segment_id = $1`, [segment]))[0] as { n: number };
    expect(members.n).toBe(expected.length);
    const events = (await db.query(
      `SELECT type, count(*)::int AS n FROM resource_events WHERE team_id = $1 AND type LIKE 'contact.%' GROUP BY type`,
      [team.teamId],
    )) as unknown[];
    expect(events).toEqual([]);
    expect((await db.query(`SELECT count(*)::int AS n FROM contact_import_chunks WHERE import_id = $1`, [id]))[0]).toEqual({ n: 0 });
    console.log(
      `contact import kill: killed at parts ${killedAt.join(' and ')} of ${ROWS / CHUNK_ROWS}; the third process wrote the rest, ${expected.length} contacts once each`,
    );
  });
});
