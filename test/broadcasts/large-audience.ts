import { call, type TestTeam } from '../support/api-harness';
import { TestAudience } from './audience';
import type { ExpectedMail } from './broadcast-mail';

/**
 * Issue 18's 10,000-contact segment: 500 unsubscribed, 300 opted out of the broadcast's topic,
 * 200 suppressed (disjoint), the other 9,000 each with their own merge values (a first name on
 * two in three, a company on every other one, a member number on all).
 */
export const LARGE_AUDIENCE = 10_000;
const UNSUBSCRIBED = (i: number) => i % 20 === 1; // 500
const OPTED_OUT = (i: number) => [3, 23, 43].includes(i % 100); // 300
const SUPPRESSED = (i: number) => i % 50 === 5; // 200
export const SKIPPED = { unsubscribed: 500, topic: 300, suppressed: 200 };

export const audienceAddress = (i: number) => `r${i}@inbox.test`;
const firstName = (i: number) => (i % 3 === 0 ? null : `Ann${i}`);
const company = (i: number) => (i % 2 === 0 ? `Co${i} & <Sons>` : null);

/** The contacts the broadcast must reach (their numbers). */
export const SENDABLE = Array.from({ length: LARGE_AUDIENCE }, (_, i) => i).filter((i) => !UNSUBSCRIBED(i) && !OPTED_OUT(i) && !SUPPRESSED(i));

/** The broadcast the test sends, in the SDK's shape (segment and topic added by the caller). */
export const LARGE_BROADCAST = {
  name: 'June',
  subject: 'June for {{{contact.first_name|friend}}}',
  previewText: 'News inside',
  html: '<html><body><p>Hi {{{contact.first_name|there}}} at {{{contact.company}}}, member {{{contact.member_no}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></body></html>',
  text: 'Hi {{{contact.first_name|there}}} at {{{contact.company}}}, member {{{contact.member_no}}}. Unsubscribe: {{{HERALD_UNSUBSCRIBE_URL}}}',
};

/** What contact `i`'s copy of LARGE_BROADCAST must say. */
export function expectedMail(i: number): ExpectedMail {
  const name = firstName(i) ?? 'there';
  const shown = company(i) ?? 'your company';
  const escaped = shown.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;');
  return {
    subject: `June for ${firstName(i) ?? 'friend'}`,
    text: [`Hi ${name} at ${shown}, member ${i}.`],
    html: [`Hi ${name} at ${escaped}, member ${i}</p>`, 'News inside'],
  };
}

/**
 * The segment, the topic, the properties and the 10,000 contacts through the batch path (two
 * CSV imports, written in chunked multi-row inserts: not 10,000 requests), and the 200
 * suppressions; one contact outside the segment, who must get nothing.
 */
export async function seedLargeAudience(apiUrl: string, team: TestTeam): Promise<{ segmentId: string; topicId: string }> {
  const audience = new TestAudience(team.resend);
  const segmentId = await audience.segment();
  const topicId = await audience.topic('Product news', 'opt_in');
  await audience.property('company', 'your company');
  await audience.property('member_no', null, 'number');
  await audience.contact({ email: 'outsider@inbox.test', first_name: 'Out' });
  const row = (i: number) => [audienceAddress(i), firstName(i), UNSUBSCRIBED(i), company(i), i];
  const header = ['email', 'first_name', 'unsubscribed', 'company', 'member_no'];
  const all = Array.from({ length: LARGE_AUDIENCE }, (_, i) => i);
  await audience.import(header, all.filter((i) => !OPTED_OUT(i)).map(row), { segments: [{ id: segmentId }] });
  await audience.import(header, all.filter(OPTED_OUT).map(row), {
    segments: [{ id: segmentId }],
    topics: [{ id: topicId, subscription: 'opt_out' }],
  });
  const suppressed = all.filter(SUPPRESSED).map(audienceAddress);
  for (let at = 0; at < suppressed.length; at += 100) {
    const added = await call(apiUrl, team.token, 'POST', '/suppressions/batch/add', { emails: suppressed.slice(at, at + 100) });
    if (added.status !== 200) throw new Error(`suppressing failed: ${added.status} ${JSON.stringify(added.body)}`);
  }
  return { segmentId, topicId };
}
