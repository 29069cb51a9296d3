import type { ContentFacts, OutcomeEvent, OutcomeFacts, ReviewedEmail } from '../insight.types';
import { scanMessage } from '../message-scan';
import { CONTENT_RULES, evaluate, OUTCOME_RULES, ordered } from './index';

const TEXT = 'Hello Jane, here is what happened on your Acme account this week: three new projects and two comments.';
const CLEAN_HTML = `<p>${TEXT}</p><p><a href="https://acme.com/account">Open your account</a> or <a href="https://www.acme.com/help">get help</a>.</p><img src="https://acme.com/logo.png" alt="Acme">`;

const cleanEmail = (): ReviewedEmail => ({
  fromAddress: 'hello@mail.acme.com',
  fromDomain: 'mail.acme.com',
  recipients: ['jane@example.org'],
  subject: 'Your week at Acme',
  html: CLEAN_HTML,
  text: TEXT,
  headers: {},
  tags: [],
});

/** A clean email's facts, changed by `patch` (its email part merged, the scan redone). */
function facts(patch: Partial<Omit<ContentFacts, 'email' | 'scan'>> & { email?: Partial<ReviewedEmail> } = {}): ContentFacts {
  const email = { ...cleanEmail(), ...patch.email };
  return {
    domain: { name: 'mail.acme.com', openTracking: false, clickTracking: false, trackingHost: 'links.mail.acme.com', trackingVerified: false },
    dmarc: { kind: 'found', record: 'v=DMARC1; p=reject', policy: 'reject' },
    history: [],
    ...patch,
    email,
    scan: scanMessage(email.html, email.text),
  };
}

const ids = (f: ContentFacts) => evaluate(CONTENT_RULES, f).map((i) => i.id);
const domain = (patch: Partial<NonNullable<ContentFacts['domain']>>) => ({ domain: { ...facts().domain!, ...patch } });
const html = (body: string) => ({ email: { html: `<p>${TEXT}</p>${body}` } });
/** 25 links of 1.8 KB each and text: ~94 KB. */
const CATALOG = `${Array.from({ length: 25 }, (_, i) => `<a href="https://acme.com/catalog/${i}?ref=${'a'.repeat(1_780)}">Item ${i}</a>`).join('<br>')}<div>${'x'.repeat(48_000)}</div>`;
/** Tracking that takes effect: on, and the tracking subdomain verified. */
const tracked = (patch: Partial<NonNullable<ContentFacts['domain']>>) => domain({ trackingVerified: true, ...patch });

describe('content rules', () => {
  it('find nothing in a clean email', () => {
    expect(evaluate(CONTENT_RULES, facts())).toEqual([]);
  });

  const cases: [string, ContentFacts][] = [
    ['dmarc-missing', facts({ dmarc: { kind: 'missing' } })],
    ['dmarc-missing', facts({ dmarc: { kind: 'found', record: 'v=DMARC1; rua=mailto:d@acme.com', policy: null } })],
    ['no-reply-sender', facts({ email: { fromAddress: 'no-reply@mail.acme.com' } })],
    ['no-reply-sender', facts({ email: { fromAddress: 'DoNotReply@mail.acme.com' } })],
    ['root-domain-sender', facts({ email: { fromAddress: 'hello@acme.com', fromDomain: 'acme.com' }, ...domain({ name: 'acme.com' }) })],
    ['click-tracking-subdomain', facts(domain({ clickTracking: true }))],
    ['open-tracking-subdomain', facts(domain({ openTracking: true }))],
    ['dmarc-policy-none', facts({ dmarc: { kind: 'found', record: 'v=DMARC1; p=none', policy: 'none' } })],
    ['tracking-on-transactional', facts({ email: { subject: 'Reset your password' }, ...domain({ clickTracking: true, trackingVerified: true }) })],
    ['link-domain-mismatch', facts(html('<a href="https://shop.example.net/deal">Deal</a>'))],
    ['youtu-be-link', facts(html('<a href="https://youtu.be/dQw4w9WgXcQ">Watch</a>'))],
    ['ip-address-link', facts(html('<a href="http://192.0.2.10/login">Log in</a>'))],
    ['ip-address-link', facts(html('<a href="http://[2001:db8::1]/login">Log in</a>'))],
    ['url-shortener-link', facts(html('<a href="https://bit.ly/3xYz">Read more</a>'))],
    ['plain-text-missing', facts({ email: { text: null } })],
    ['gmail-clipping', facts(html(`<div>${'<span style="color:#333">x</span>'.repeat(3_500)}</div>`))],
    ['image-missing-alt', facts(html('<img src="https://acme.com/chart.png">'))],
    ['image-only', facts({ email: { html: '<a href="https://acme.com/sale"><img src="https://acme.com/sale.png" alt="Sale: 50% off"></a>' } })],
    ['list-unsubscribe-missing', facts(html('<a href="https://acme.com/unsubscribe">Unsubscribe</a>'))],
    ['list-unsubscribe-missing', facts({ email: { headers: { 'list-id': '<news.acme.com>', 'list-unsubscribe': '<https://acme.com/u>' } } })],
    ['recipient-domain-typo', facts({ email: { recipients: ['jane@gmial.com'] } })],
    ['recipient-domain-typo', facts({ email: { recipients: ['jane@hotmail.con'] } })],
    [
      'recipient-history',
      facts({
        history: [{ address: 'jane@example.org', kind: 'suppressed', origin: 'complaint', at: new Date('2026-11-01T10:00:00Z'), detail: null }],
      }),
    ],
    ['role-recipient', facts({ email: { recipients: ['postmaster@example.org'] } })],
    ['role-recipient', facts({ email: { recipients: ['abuse+mail@example.org'] } })],
    ['link-text-url-mismatch', facts(html('<a href="https://acme.com/go">https://paypal.com/login</a>'))],
    [
      'click-tracking-url-text',
      facts({ ...html('<a href="https://acme.com/pricing">https://acme.com/pricing</a>'), ...tracked({ clickTracking: true }) }),
    ],
    [
      'click-tracking-one-time-link',
      facts({ ...html('<a href="https://acme.com/password/reset?token=3f9a">Choose a new password</a>'), ...tracked({ clickTracking: true }) }),
    ],
    [
      'click-tracking-one-time-link',
      facts({ ...html('<a href="https://acme.com/auth/magic-link/k81c">Sign in to Acme</a>'), ...tracked({ clickTracking: true }) }),
    ],
    ['too-many-links', facts(html(Array.from({ length: 31 }, (_, i) => `<a href="https://acme.com/item/${i}">Item ${i}</a>`).join(' ')))],
    // ~94 KB of HTML with 25 long links: under 102 KB as written, over it once each link is a signed redirect.
    [
      'tracking-gmail-clipping',
      facts({
        ...html(`${CATALOG}`),
        ...tracked({ clickTracking: true }),
      }),
    ],
    ['open-tracking-without-html', facts({ email: { html: null }, ...tracked({ openTracking: true }) })],
  ];

  it.each(cases)('%s: a crafted email gets exactly that insight', (id, crafted) => {
    expect(ids(crafted)).toEqual([id]);
  });

  it('covers every content rule with a crafted email', () => {
    expect(new Set(cases.map(([id]) => id))).toEqual(new Set(CONTENT_RULES.map((r) => r.id)));
  });

  it('says what it found, with the measured value, and how to fix it', () => {
    const [clip] = evaluate(CONTENT_RULES, facts(html(`<div>${'<b>y</b>'.repeat(16_000)}</div>`)));
    expect(clip).toMatchObject({ id: 'gmail-clipping', severity: 'attention', found: expect.stringMatching(/^The HTML part is 125\.\d KB/) });
    expect(clip.fix).toMatch(/102 KB/);
    const [typo] = evaluate(CONTENT_RULES, facts({ email: { recipients: ['jane@gmial.com'] } }));
    expect(typo.found).toContain('jane@gmial.com (did you mean gmail.com?)');
    const [mismatch] = evaluate(CONTENT_RULES, facts(html('<a href="https://shop.example.net/a">A</a><a href="https://shop.example.net/b">B</a>')));
    expect(mismatch.found).toBe('2 of 2 links point to 1 domain other than acme.com: shop.example.net.');
    const [history] = evaluate(
      CONTENT_RULES,
      facts({
        history: [
          { address: 'jane@example.org', kind: 'bounced', origin: null, at: new Date('2026-11-02T00:00:00Z'), detail: '550 5.1.1 no such user' },
        ],
      }),
    );
    expect(history.found).toBe('A recipient has earlier trouble: jane@example.org bounced on 2026-11-02 (550 5.1.1 no such user).');
  });

  it('lists attention before improvement, in rule order, the same way every time', () => {
    const many = facts({
      email: { fromAddress: 'noreply@acme.com', fromDomain: 'acme.com', text: null },
      ...domain({ name: 'acme.com', openTracking: true }),
    });
    const first = ordered(evaluate(CONTENT_RULES, many)).map((i) => `${i.severity}:${i.id}`);
    expect(first).toEqual([
      'attention:no-reply-sender',
      'attention:plain-text-missing',
      'improvement:root-domain-sender',
      'improvement:open-tracking-subdomain',
    ]);
    expect(ordered(evaluate(CONTENT_RULES, many)).map((i) => `${i.severity}:${i.id}`)).toEqual(first);
  });

  it('leaves links marked no-track and List-Unsubscribe targets to the reader, and words as link text alone', () => {
    const clickOn = tracked({ clickTracking: true });
    expect(ids(facts({ ...html('<a data-herald-no-track href="https://acme.com/reset?token=1">https://acme.com/reset</a>'), ...clickOn }))).toEqual(
      [],
    );
    expect(
      ids(
        facts({
          email: {
            html: `<p>${TEXT}</p><a href="https://acme.com/u?token=9">Unsubscribe</a>`,
            headers: { 'list-unsubscribe': '<https://acme.com/u?token=9>' },
          },
          ...clickOn,
        }),
      ),
    ).toEqual(['list-unsubscribe-missing']);
    expect(ids(facts({ ...html('<a href="https://acme.com/pricing">See our pricing</a>'), ...clickOn }))).toEqual([]);
    expect(ids(facts(html('<a href="https://www.acme.com/help">acme.com/help</a>')))).toEqual([]);
  });

  it('measures the message as tracking will send it', () => {
    const [clip] = evaluate(
      CONTENT_RULES,
      facts({
        ...html(`${CATALOG}`),
        ...tracked({ clickTracking: true }),
      }),
    );
    expect(clip.found).toMatch(/^The HTML part is 9\d\.\d KB, and 1\d\d\.\d KB once tracking rewrites its links and adds the pixel/);
  });

  it('says nothing about DMARC when DNS gave no answer', () => {
    expect(ids(facts({ dmarc: { kind: 'unknown' } }))).toEqual([]);
  });
});

describe('outcome rules', () => {
  const at = new Date('2026-11-26T12:00:00Z');
  const event = (type: string, data: Record<string, unknown> = {}, recipients = ['jane@example.org']): OutcomeEvent => ({
    type,
    recipients,
    data,
    createdAt: at,
  });
  const outcome = (...events: OutcomeEvent[]): OutcomeFacts => ({
    events: [event('email.sent'), ...events],
    recipients: [{ address: 'jane@example.org', status: 'deferred', lastResponse: '421 4.7.28 Gmail has detected an unusual rate' }],
  });
  const delivered = (tls: boolean) => event('email.delivered', { delivery: { mx: 'mx.example.org', tls } });

  it('find nothing in a delivery over TLS', () => {
    expect(evaluate(OUTCOME_RULES, outcome(delivered(true)))).toEqual([]);
  });

  const cases: [string, OutcomeFacts][] = [
    [
      'bounced',
      outcome(
        event('email.bounced', { bounce: { type: 'Permanent', subType: 'NoEmail', message: 'x', diagnosticCode: ['smtp; 550 5.1.1 no such user'] } }),
      ),
    ],
    ['complained', outcome(delivered(true), event('email.complained'))],
    ['delivered-without-tls', outcome(delivered(false))],
    [
      'deferred-by-provider',
      outcome(event('email.delivery_delayed', { delivery: { mx: 'gmail-smtp-in.l.google.com', response: '421 4.7.28 rate' } })),
    ],
    ['deferred-by-provider', outcome(event('email.delivery_delayed'))],
    [
      'link-scanner-clicks',
      outcome(
        delivered(true),
        event('email.clicked', {
          click: { link: 'https://acme.com/reset?token=1' },
          tracking: { machine: true, reason: 'link_scanner', unique: false },
        }),
      ),
    ],
    ['machine-opens-only', outcome(delivered(true), event('email.opened', { tracking: { machine: true, reason: 'apple_privacy', unique: true } }))],
  ];

  it('says nothing of opens when a person opened too', () => {
    const human = event('email.opened', { tracking: { machine: false, reason: null, unique: true } });
    const apple = event('email.opened', { tracking: { machine: true, reason: 'apple_privacy', unique: true } });
    expect(evaluate(OUTCOME_RULES, outcome(delivered(true), apple, human))).toEqual([]);
  });

  it.each(cases)('%s: crafted events get exactly that insight', (id, crafted) => {
    expect(evaluate(OUTCOME_RULES, crafted).map((i) => i.id)).toEqual([id]);
  });

  it('covers every outcome rule', () => {
    expect(new Set(cases.map(([id]) => id))).toEqual(new Set(OUTCOME_RULES.map((r) => r.id)));
  });

  it('names the provider that deferred, its reply, and advice for that reply', () => {
    const [deferred] = evaluate(
      OUTCOME_RULES,
      outcome(event('email.delivery_delayed', { delivery: { mx: 'gmail-smtp-in.l.google.com', response: '421 4.7.28 unusual rate of mail' } })),
    );
    expect(deferred.found).toBe(
      'Delivery to jane@example.org was deferred by Gmail / Google Workspace (gmail-smtp-in.l.google.com): "421 4.7.28 unusual rate of mail".',
    );
    expect(deferred.fix).toMatch(/warm up/);
    const [fallback] = evaluate(OUTCOME_RULES, outcome(event('email.delivery_delayed')));
    expect(fallback.found).toBe('Delivery to jane@example.org was deferred: "421 4.7.28 Gmail has detected an unusual rate".');
  });
});
