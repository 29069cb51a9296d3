import { DataSource } from 'typeorm';
import { QuotaService } from '@herald/limits';
import { startTestApi, type TestApi, type TestTeam } from '../support/api-harness';
import { TestAudience } from './audience';

/**
 * Broadcast emails count against the team's plan quota, as the batch API's do: a send that would
 * exceed what is left is refused with Resend's 403 `validation_error`, and the fan-out reserves
 * each chunk's emails (one contact per chunk here) so that a quota spent meanwhile holds the
 * broadcast, which resumes where it stopped once the quota allows.
 */
describe('broadcasts and the plan quota', () => {
  let api: TestApi;
  let acme: TestTeam;
  let quota: QuotaService;
  let segmentId: string;
  const dailyUsed = async () => (await quota.usage(acme.teamId, 'free')).daily.used;

  beforeAll(async () => {
    api = await startTestApi({ BROADCAST_CHUNK_SIZE: '1', FREE_DAILY_LIMIT: '100' });
    acme = await api.team({ plan: 'free' });
    quota = api.app.get(QuotaService);
    const audience = new TestAudience(acme.resend);
    segmentId = await audience.segment();
    for (const name of ['ann', 'bob', 'cat'])
      await audience.contact({ email: `${name}@quota.test`, first_name: name, segments: [{ id: segmentId }] });
    // An unsubscribed member is not counted: the broadcast would write three emails.
    await audience.contact({ email: 'gone@quota.test', unsubscribed: true, segments: [{ id: segmentId }] });
  });
  afterAll(async () => {
    await api.close();
  });

  const draft = (name: string) => ({ name, segmentId, from: acme.from('news'), subject: name, html: '<p>Hi</p>' });

  it('refuses a send that would exceed what the plan has left today, with 403 validation_error', async () => {
    const spent = await quota.reserve(acme.teamId, 'free', 98);
    const created = await acme.resend.broadcasts.create({ ...draft('Too many'), send: true });
    expect(created.error).toMatchObject({
      statusCode: 403,
      name: 'validation_error',
      message: "Contacts quota reached: this broadcast would send 3 emails, and the team's plan allows 2 more today.",
    });
    const { data } = await acme.resend.broadcasts.create(draft('Later'));
    expect((await acme.resend.broadcasts.send(data!.id)).error).toMatchObject({ statusCode: 403, name: 'validation_error' });
    expect((await acme.resend.broadcasts.get(data!.id)).data!.status).toBe('draft');
    expect(await dailyUsed()).toBe(98);
    await quota.release(acme.teamId, spent);
  });

  it("reserves each chunk's emails; a quota spent meanwhile holds the broadcast, which resumes without a duplicate", async () => {
    const spent = await quota.reserve(acme.teamId, 'free', 97);
    const { data, error } = await acme.resend.broadcasts.create({ ...draft('Held'), send: true, scheduledAt: 'in 2 seconds' });
    expect(error).toBeNull();
    // Accepted with 3 left; then another send takes one of them before the fan-out runs.
    const other = await quota.reserve(acme.teamId, 'free', 1);
    const id = data!.id;
    const deadline = Date.now() + 15_000;
    let got = await acme.resend.broadcasts.get(id);
    const written = () => (got.data as unknown as { counts: { recipients: number } }).counts.recipients;
    while (written() < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      got = await acme.resend.broadcasts.get(id);
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    got = await acme.resend.broadcasts.get(id);
    expect(got.data).toMatchObject({ status: 'sending', counts: { recipients: 2 } });
    expect(await dailyUsed()).toBe(100);

    // The day turns (the quota is given back, the hold ends): the fan-out goes on after the two it wrote.
    await quota.release(acme.teamId, spent);
    await quota.release(acme.teamId, other);
    await api.app.get(DataSource).query(`UPDATE broadcasts SET lease_until = now() WHERE id = $1`, [id]);
    const resumed = Date.now() + 15_000;
    while (got.data!.status !== 'sent' && Date.now() < resumed) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      got = await acme.resend.broadcasts.get(id);
    }
    expect(got.data).toMatchObject({ status: 'sent', counts: { recipients: 3, skipped_unsubscribed: 1 } });
    const emails = (await acme.resend.emails.list({ limit: 100 })).data!.data.filter((e) => e.subject === 'Held');
    expect(emails.map((e) => e.to[0]).sort()).toEqual(['ann@quota.test', 'bob@quota.test', 'cat@quota.test']);
    expect(await dailyUsed()).toBe(3);
  });
});
