import { randomBytes } from 'node:crypto';
import type { Broadcast } from './broadcast.types';
import { filledEmail, prepareBroadcast, recipientEmail, unsubscribeOf, withPreheader } from './broadcast-message';
import { UnsubscribeKeys } from './unsubscribe-token';

const keys = UnsubscribeKeys.fromConfig({ TRACKING_KEYS: [randomBytes(32).toString('base64')] });
const broadcast: Broadcast = {
  id: '01a21984-f134-705c-bc2f-c8b6dc4451a2',
  teamId: '01a21984-0000-705c-bc2f-c8b6dc4451a2',
  name: 'June',
  segmentId: '01a21984-1111-705c-bc2f-c8b6dc4451a2',
  topicId: null,
  from: 'Acme <News@Acme.test>',
  subject: 'Hi {{{contact.first_name|there}}}\r\nBcc: evil@x.test',
  replyTo: ['Help <help@acme.test>'],
  previewText: 'Inside: <news>',
  html: '<html><body class="x"><p>{{{contact.first_name|there}}} at {{{contact.company}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">u</a></body></html>',
  text: 'Hi {{{contact.first_name|there}}}: {{{HERALD_UNSUBSCRIBE_URL}}}',
  document: null,
  status: 'sending',
  scheduledAt: null,
  sentAt: null,
  createdAt: new Date(),
  counts: { recipients: 0, skippedUnsubscribed: 0, skippedTopic: 0, skippedSuppressed: 0 },
};

describe('a recipient’s copy of a broadcast', () => {
  const prepared = prepareBroadcast(broadcast, {
    region: 'eu-west-1',
    unsubscribeBase: 'https://api.acme.test/unsubscribe/',
    returnPathDomain: 'send.acme.test',
    fallbacks: { company: 'your company' },
  });
  const emailId = '01a21984-2222-705c-bc2f-c8b6dc4451a2';
  const stored = recipientEmail(
    prepared,
    { contactId: 'c', email: 'ann@inbox.test', firstName: 'Ann & Bo', lastName: null, properties: { company: null } },
    emailId,
    'dispatch-1',
    unsubscribeOf(prepared, emailId, keys),
  );
  const email = filledEmail(stored);

  it('is stored as the broadcast’s template and this recipient’s values, each tag once', () => {
    expect(stored.email.html).toBeNull();
    expect(stored.email.text).toBeNull();
    expect(stored.template!.of).toBe(prepared.template);
    expect(stored.template!.values).toEqual(['Ann & Bo', 'your company', email.email.text!.split(': ')[1]]);
  });

  it('is an ordinary email of the team, linked to the broadcast, sent from the domain’s region', () => {
    expect(email).toMatchObject({
      id: emailId,
      teamId: broadcast.teamId,
      region: 'eu-west-1',
      source: 'api',
      broadcastId: broadcast.id,
      dispatchId: 'dispatch-1',
    });
    expect(email.email).toMatchObject({
      from: 'Acme <News@Acme.test>',
      fromDomain: 'acme.test',
      to: ['ann@inbox.test'],
      replyTo: ['help@acme.test'],
    });
    expect(email.email.recipients).toEqual([{ kind: 'to', address: 'ann@inbox.test' }]);
  });

  it('fills its merge values, escaped in the html, and folds line breaks out of the subject', () => {
    expect(email.email.subject).toBe('Hi Ann & Bo Bcc: evil@x.test');
    expect(email.email.html).toContain('<p>Ann &amp; Bo at your company</p>');
    expect(email.email.text).toMatch(/^Hi Ann & Bo: https:\/\/api\.acme\.test\/unsubscribe\/[A-Za-z0-9_-]{44}$/);
  });

  it('carries a one-click List-Unsubscribe naming its own email, link and mailbox', () => {
    const link = email.email.text!.split(': ')[1]!;
    expect(keys.verifyToken(link.split('/').pop()!)).toBe(emailId);
    expect(email.email.html).toContain(`href="${link}"`);
    const header = email.email.headers!['List-Unsubscribe']!;
    const [, mailbox] = /<mailto:([^?]+)\?subject=unsubscribe>$/.exec(header)!;
    expect(header.startsWith(`<${link}>, <mailto:`)).toBe(true);
    expect(keys.verifyMailbox(mailbox!)).toBe(emailId);
    expect(mailbox!.endsWith('@send.acme.test')).toBe(true);
    expect(email.email.headers!['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
  });

  it('puts the preview text first in the body, hidden and escaped', () => {
    expect(email.email.html).toMatch(/^<html><body class="x"><div style="display:none[^"]*">Inside: &lt;news&gt;/);
    expect(withPreheader('<p>no body tag</p>', 'Hi')).toMatch(/^<div style="display:none[^>]*>Hi.*<\/div><p>no body tag<\/p>$/);
    expect(withPreheader('<p>x</p>', null)).toBe('<p>x</p>');
  });
});
