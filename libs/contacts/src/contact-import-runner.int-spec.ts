import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { OutboxWorld, startOutboxWorld } from '../../../test/support/outbox-world';
import { ContactImportJobsRepository, ImportCursorMoved } from './contact-import-jobs.repository';
import { ContactImportRunner } from './contact-import-runner.service';
import type { StreamedForm } from './contact-import.form';
import { ContactImportsService } from './contact-imports.service';
import { ContactsModule } from './contacts.module';

const LEASE_SECONDS = 2;

/** A form as the api's multipart reader hands it on: the file first (as the SDK sends it), then the text fields. */
function form(csv: string, fields: Record<string, string> = {}): StreamedForm {
  const bytes = async function* (text: string) {
    yield Buffer.from(text);
  };
  return {
    streamed: true,
    async *parts() {
      yield { name: 'file', filename: 'contacts.csv', body: bytes(csv) };
      for (const [name, value] of Object.entries(fields)) yield { name, filename: null, body: bytes(value) };
    },
  };
}

/** The background side of CSV imports on the real database: parts, lease, cursor, failures. */
describe('contact import runner (Postgres)', () => {
  let world: OutboxWorld;
  let db: DataSource;
  let imports: ContactImportsService;
  let jobs: ContactImportJobsRepository;
  let runner: ContactImportRunner;
  let teamId: string;

  const state = async (id: string) =>
    (
      await db.query(
        `SELECT status, cursor, chunks, attempts, created, failed, error, completed_at IS NOT NULL AS done FROM contact_imports WHERE id = $1`,
        [id],
      )
    )[0] as Record<string, unknown>;
  const storedParts = async (id: string) =>
    (await db.query(`SELECT count(*)::int AS n FROM contact_import_chunks WHERE import_id = $1`, [id]))[0].n as number;

  beforeAll(async () => {
    world = await startOutboxWorld([ContactsModule], { CONTACT_IMPORT_CHUNK_ROWS: '2', CONTACT_IMPORT_LEASE_SECONDS: String(LEASE_SECONDS) });
    db = world.db;
    imports = world.moduleRef.get(ContactImportsService);
    jobs = world.moduleRef.get(ContactImportJobsRepository);
    // Not started (no ContactImportRunnerModule here): each test runs its passes.
    runner = world.moduleRef.get(ContactImportRunner);
  });
  beforeEach(async () => {
    teamId = randomUUID();
    await db.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', 'eu-west-1', 'free')`, [teamId]);
    // Each test's import is the only one due.
    await db.query(`UPDATE contact_imports SET status = 'completed' WHERE status IN ('queued', 'in_progress')`);
  });
  afterAll(() => world?.close());

  it('stores the upload in parts and records the import queued; a header alone is completed at once', async () => {
    const queued = await imports.create(teamId, form('email,first_name\na@x.io,A\nb@x.io,B\nc@x.io,C\n'));
    expect(queued).toMatchObject({ status: 'queued' });
    expect(await state(queued.id)).toMatchObject({ status: 'queued', cursor: 0, chunks: 2 });
    expect(await imports.get(teamId, queued.id)).toMatchObject({ counts: { total: 3, created: 0 }, completed_at: null });
    const empty = await imports.create(teamId, form('email,first_name\n'));
    expect(empty).toMatchObject({ status: 'completed' });
    expect(await state(empty.id)).toMatchObject({ status: 'completed', chunks: 0, done: true });
    await expect(imports.create(teamId, form('name\nAnn\n'))).rejects.toMatchObject({ code: 'validation_error' });
    expect(
      await db.query(
        `SELECT count(*)::int AS n FROM contact_import_chunks c WHERE NOT EXISTS (SELECT 1 FROM contact_imports i WHERE i.id = c.import_id)`,
      ),
    ).toEqual([{ n: 0 }]);
  });

  it('lets one process write a part: a second one at the same cursor waits for it, then finds the cursor moved', async () => {
    const { id } = await imports.create(teamId, form('email\na@x.io\nb@x.io\nc@x.io\n'));
    const job = (await jobs.claimDue(LEASE_SECONDS))!;
    expect(job).toMatchObject({ id, cursor: 0, chunks: 2 });
    let second: Promise<unknown> = Promise.resolve();
    await db.transaction(async (first) => {
      await jobs.hold(first, id, 0);
      second = db.transaction((tx) => jobs.hold(tx, id, 0));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await jobs.advance(first, id, { created: 2, updated: 0, skipped: 0, failed: 0, rejected: [] }, LEASE_SECONDS);
    });
    await expect(second).rejects.toBeInstanceOf(ImportCursorMoved);
    expect(await state(id)).toMatchObject({ status: 'in_progress', cursor: 1, created: 2 });
  });

  it('gives an import up as failed after three failures of a part in a row, keeping what it wrote', async () => {
    const { id } = await imports.create(teamId, form('email\na@x.io\nb@x.io\nnot-an-address\nc@x.io\n'));
    await db.query(`DELETE FROM contact_import_chunks WHERE import_id = $1 AND seq = 1`, [id]);
    await runner.pass();
    expect(await state(id)).toMatchObject({ status: 'in_progress', cursor: 1, attempts: 1, created: 2 });
    for (const attempts of [2, 3]) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 1000 + 200));
      await runner.pass();
      expect(await state(id)).toMatchObject({ attempts });
    }
    expect(await state(id)).toMatchObject({
      status: 'failed',
      cursor: 1,
      created: 2,
      error: 'The import stopped on an internal error; the rows counted were written.',
      done: true,
    });
    expect(await storedParts(id)).toBe(0);
    expect(await db.query(`SELECT email FROM contacts WHERE team_id = $1 ORDER BY email`, [teamId])).toEqual([
      { email: 'a@x.io' },
      { email: 'b@x.io' },
    ]);
  });
});
