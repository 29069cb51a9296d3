import { simpleParser } from 'mailparser';
import { DomainsRepository } from '@herald/domains';
import { TestAudience } from '../broadcasts/audience';
import { markVerified } from '../support/api-harness';
import type { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld, PEOPLE_DOMAIN } from '../support/dashboard-world';

jest.setTimeout(120_000);

/**
 * The Broadcasts page's API (what the editor calls): drafts with a document, autosave, preview,
 * a test send that arrives with the document's content in html and text, scheduling, cancelling,
 * sending, with a session and the CSRF header, and another team kept out.
 */
describe('dashboard broadcasts', () => {
  let world: DashboardWorld;
  let alice: DashboardClient;
  let bob: DashboardClient;
  let teamId: string;
  let segmentId: string;

  beforeAll(async () => {
    world = await DashboardWorld.start();
    alice = await world.signedIn(`alice@${PEOPLE_DOMAIN}`, 'alice password 1', { team_name: 'Acme' });
    bob = await world.signedIn(`bob@${PEOPLE_DOMAIN}`, 'bob password 12', { team_name: 'Other' });
    teamId = (await alice.get('/dashboard/api/me')).body.teams[0].id;
    const domain = await alice.post(`/dashboard/api/teams/${teamId}/domains`, { name: 'acme-news.test' });
    await markVerified(world.delivery.api.app.get(DomainsRepository), domain.body.id);
    const audience = new TestAudience(world.delivery.api.app, teamId);
    segmentId = await audience.segment('Readers');
    await audience.contact({ email: `reader@${PEOPLE_DOMAIN}`, first_name: 'Rita', segments: [{ id: segmentId }] });
  }, 90_000);
  afterAll(async () => {
    await world?.close();
  });

  const path = (rest = '') => `/dashboard/api/teams/${teamId}/broadcasts${rest}`;
  const document = (heading: string) => ({
    type: 'doc',
    content: [
      {
        type: 'container',
        content: [
          {
            type: 'heading',
            attrs: { level: 1 },
            content: [
              { type: 'text', text: `${heading} ` },
              { type: 'mergeTag', attrs: { key: 'contact.first_name', fallback: 'friend' } },
            ],
          },
          { type: 'paragraph', content: [{ type: 'text', text: 'Our June news.' }] },
          { type: 'footer', content: [{ type: 'text', text: 'Acme Inc.' }] },
        ],
      },
    ],
  });

  it('creates a draft from a document, autosaves it, previews, test-sends, schedules, cancels and sends it', async () => {
    const created = await alice.post(path(), {
      from: 'Acme <news@acme-news.test>',
      subject: 'June',
      segment_id: segmentId,
      document: document('Hello'),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'broadcast', status: 'draft', document: document('Hello'), counts: { recipients: 0 } });
    const id = created.body.id;

    const saved = await alice.request('PATCH', path(`/${id}`), { document: document('Hi'), name: 'June news' });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ id, name: 'June news', document: document('Hi'), status: 'draft' });
    expect((await alice.get(path())).body.data.map((b: { id: string }) => b.id)).toEqual([id]);

    const preview = await alice.post(path('/preview'), { document: document('Hi') });
    expect(preview.status).toBe(200);
    expect(preview.body.html).toContain('{{{contact.first_name|friend}}}');
    expect(preview.body.text).toContain('Hi {{{contact.first_name|friend}}}');
    const badPreview = await alice.post(path('/preview'), { document: { type: 'doc', content: [{ type: 'marquee' }] } });
    expect(badPreview).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringMatching(/^Invalid `document` field: document\.content\[0\]/) },
    });

    const tester = `tester@${PEOPLE_DOMAIN}`;
    const test = await alice.post(path(`/${id}/test`), { to: tester });
    expect(test.status).toBe(200);
    const mail = await world.mailTo(tester, /^June$/);
    expect(mail.html).toContain('Hi friend');
    expect(mail.text).toContain('Hi friend');
    expect(mail.text).toContain('Our June news.');
    expect(mail.html).toContain(`${world.url}/unsubscribe/test`);
    const raw = world.inbox.messages.find((m) => m.recipients.includes(tester))!;
    expect((await simpleParser(raw.raw)).headers.has('list-unsubscribe')).toBe(false);
    const testPage = await fetch(`${world.url}/unsubscribe/test`);
    expect(await testPage.text()).toContain('This was a test email');

    const scheduled = await alice.post(path(`/${id}/send`), { scheduled_at: 'tomorrow at 9am' });
    expect(scheduled).toMatchObject({ status: 200, body: { status: 'scheduled' } });
    expect((await alice.request('PATCH', path(`/${id}`), { subject: 'late' })).status).toBe(422);
    expect(await alice.post(path(`/${id}/cancel`))).toMatchObject({ status: 200, body: { status: 'cancelled' } });
    expect(await alice.request('DELETE', path(`/${id}`))).toMatchObject({ status: 200, body: { id, deleted: true } });

    const now = await alice.post(path(), { from: 'Acme <news@acme-news.test>', subject: 'Now', segment_id: segmentId, document: document('Now') });
    expect(await alice.post(path(`/${now.body.id}/send`), {})).toMatchObject({
      status: 200,
      body: { status: expect.stringMatching(/^(queued|sending|sent)$/) },
    });
    const delivered = await world.mailTo(`reader@${PEOPLE_DOMAIN}`, /^Now$/);
    expect(delivered.text).toContain('Now Rita');
  });

  it('needs the CSRF header, and keeps another team out', async () => {
    alice.csrf = false;
    expect((await alice.post(path(), { subject: 'x' })).status).toBe(403);
    alice.csrf = true;
    expect((await bob.get(path())).status).toBe(404);
  });
});
