import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { newEmailRow, normalizedEmail } from '../../../test/support/email-rows';
import { EmailRepository } from './email.repository';
import { readStoredMimes } from './stored-mime';

/** The worker's read of stored MIME messages: whole when small, in slices when large, byte for byte either way. */
describe('readStoredMimes', () => {
  let api: TestApi;
  let team: TestTeam;
  let db: DataSource;

  beforeAll(async () => {
    api = await startTestApi();
    team = await api.team();
    db = api.app.get(DataSource);
  });
  afterAll(() => api?.close());

  const stored = async (mime: Buffer) => {
    const row = newEmailRow(team.teamId, normalizedEmail(team.from('hello'), team.domain));
    await api.app.get(EmailRepository).insert([row]);
    await db.query(`INSERT INTO email_mime (email_id, mime) VALUES ($1, $2)`, [row.id, mime]);
    return row.id;
  };

  it('reads each message byte for byte, the small whole and the large in slices, and skips emails without one', async () => {
    const small = randomBytes(999);
    const exact = randomBytes(3000);
    const large = randomBytes(10_501);
    const ids = await Promise.all([stored(small), stored(exact), stored(large)]);
    const none = newEmailRow(team.teamId, normalizedEmail(team.from('hello'), team.domain));
    await api.app.get(EmailRepository).insert([none]);

    const mimes = await db.transaction((m) => readStoredMimes(m, [...ids, none.id], 1000));
    expect([...mimes.keys()].sort()).toEqual([...ids].sort());
    expect(mimes.get(ids[0])!.equals(small)).toBe(true);
    expect(mimes.get(ids[1])!.equals(exact)).toBe(true);
    expect(mimes.get(ids[2])!.equals(large)).toBe(true);
  });

  it('reads a 12 MB message in 1 MiB slices, as the claim does', async () => {
    const big = randomBytes(12 * 1024 * 1024 + 7);
    const id = await stored(big);
    const mimes = await db.transaction((m) => readStoredMimes(m, [id]));
    expect(mimes.get(id)!.equals(big)).toBe(true);
  });
});
