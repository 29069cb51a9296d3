import { randomUUID } from 'node:crypto';
import type { TestTeam } from '../support/api-harness';

/**
 * The tenant-isolation matrix (tenant-isolation.e2e-spec.ts): for every REST route, what team B's
 * full-access key asks of it about team A's resources, and what it must get.
 */

/** One team's resources: one of each kind the REST API serves. */
export interface Resources {
  team: TestTeam;
  emailId: string;
  keyId: string;
  webhookId: string;
  webhookEndpoint: string;
  eventId: string;
  suppressionId: string;
  suppressedEmail: string;
  contactId: string;
  contactEmail: string;
  segmentId: string;
  topicId: string;
  propertyId: string;
  importId: string;
  broadcastId: string;
}

/**
 * What team B's full-access key gets for a request about team A: `not_found` (404, as Resend
 * answers for another account's id), `own` (2xx, and nothing of team A in the body: a list or a
 * create that touches only B's own data), or an exact error.
 */
export type Outcome = 'not_found' | 'own' | { status: number; name: string };
export interface Probe {
  path: string;
  body?: unknown;
  /** A multipart form instead of a JSON body (the contacts import). */
  form?: Record<string, string>;
  full: Outcome;
}

/**
 * Every REST route, what team B asks of it about team A's resources. A route of the document
 * without a row fails the suite, so a new endpoint cannot ship without saying how it keeps teams
 * apart. Routes with two ids are asked with A's pair and with B's parent over A's child.
 */
export const ROWS: Record<string, (a: Resources, b: Resources) => Probe[]> = {
  'post /emails': (a) => [{ path: '/emails', body: email(a.team.from('ceo')), full: refusedDomain }],
  'post /emails/batch': (a, b) => [{ path: '/emails/batch', body: [email(b.team.from()), email(a.team.from('ceo'))], full: refusedDomain }],
  'get /emails': () => [{ path: '/emails', full: 'own' }],
  'get /emails/{id}': (a) => [{ path: `/emails/${a.emailId}`, full: 'not_found' }],
  'get /emails/{id}/insights': (a) => [{ path: `/emails/${a.emailId}/insights`, full: 'not_found' }],
  'patch /emails/{id}': (a) => [{ path: `/emails/${a.emailId}`, body: { scheduled_at: inHours(3) }, full: 'not_found' }],
  'post /emails/{id}/cancel': (a) => [{ path: `/emails/${a.emailId}/cancel`, full: 'not_found' }],
  'post /api-keys': (a) => [
    {
      path: '/api-keys',
      body: { name: 'theirs', permission: 'sending_access', domain_id: a.team.domainId },
      full: { status: 422, name: 'validation_error' },
    },
  ],
  'get /api-keys': () => [{ path: '/api-keys', full: 'own' }],
  'patch /api-keys/{id}': (a) => [{ path: `/api-keys/${a.keyId}`, body: { name: 'taken over' }, full: 'not_found' }],
  'delete /api-keys/{id}': (a) => [{ path: `/api-keys/${a.keyId}`, full: 'not_found' }],
  'post /domains': (a) => [{ path: '/domains', body: { name: a.team.domain }, full: { status: 403, name: 'validation_error' } }],
  'get /domains': () => [{ path: '/domains', full: 'own' }],
  'get /domains/{id}': (a) => [{ path: `/domains/${a.team.domainId}`, full: 'not_found' }],
  'patch /domains/{id}': (a) => [{ path: `/domains/${a.team.domainId}`, body: { open_tracking: true }, full: 'not_found' }],
  'delete /domains/{id}': (a) => [{ path: `/domains/${a.team.domainId}`, full: 'not_found' }],
  'post /domains/{id}/verify': (a) => [{ path: `/domains/${a.team.domainId}/verify`, full: 'not_found' }],
  'post /domains/{id}/dkim/rotate': (a) => [{ path: `/domains/${a.team.domainId}/dkim/rotate`, full: 'not_found' }],
  'post /domains/{id}/resume': (a) => [{ path: `/domains/${a.team.domainId}/resume`, full: 'not_found' }],
  'post /suppressions': (a) => [{ path: '/suppressions', body: { email: a.suppressedEmail }, full: 'own' }],
  'get /suppressions': () => [{ path: '/suppressions', full: 'own' }],
  'get /suppressions/{idOrEmail}': (a) => [
    { path: `/suppressions/${a.suppressionId}`, full: 'not_found' },
    { path: `/suppressions/${encodeURIComponent(a.suppressedEmail)}`, full: 'not_found' },
  ],
  'delete /suppressions/{idOrEmail}': (a) => [
    { path: `/suppressions/${a.suppressionId}`, full: 'not_found' },
    { path: `/suppressions/${encodeURIComponent(a.suppressedEmail)}`, full: 'not_found' },
  ],
  'post /suppressions/batch/add': (a) => [{ path: '/suppressions/batch/add', body: { emails: [a.suppressedEmail] }, full: 'own' }],
  'post /suppressions/batch/remove': (a) => [{ path: '/suppressions/batch/remove', body: { emails: [a.suppressedEmail] }, full: 'own' }],
  'post /webhooks': (a) => [{ path: '/webhooks', body: { endpoint: a.webhookEndpoint, events: ['email.sent'] }, full: 'own' }],
  'get /webhooks': () => [{ path: '/webhooks', full: 'own' }],
  'get /webhooks/{id}': (a) => [{ path: `/webhooks/${a.webhookId}`, full: 'not_found' }],
  'patch /webhooks/{id}': (a) => [
    { path: `/webhooks/${a.webhookId}`, body: { endpoint: 'https://attacker.example/hook', status: 'enabled' }, full: 'not_found' },
  ],
  'delete /webhooks/{id}': (a) => [{ path: `/webhooks/${a.webhookId}`, full: 'not_found' }],
  'post /webhooks/{id}/signing-secret/rotate': (a) => [{ path: `/webhooks/${a.webhookId}/signing-secret/rotate`, full: 'not_found' }],
  'get /webhooks/{id}/events': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events`, full: 'own' },
  ],
  'get /webhooks/{id}/events/{eventId}': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events/${a.eventId}`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events/${a.eventId}`, full: 'not_found' },
  ],
  'post /webhooks/{id}/events/{eventId}/replay': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events/${a.eventId}/replay`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events/${a.eventId}/replay`, full: 'not_found' },
  ],
  'get /webhooks/{id}/events/{eventId}/attempts': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events/${a.eventId}/attempts`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events/${a.eventId}/attempts`, full: 'not_found' },
  ],
  'post /contacts': (a) => [{ path: '/contacts', body: { email: a.contactEmail, first_name: 'Theirs' }, full: 'own' }],
  'get /contacts': () => [{ path: '/contacts', full: 'own' }],
  ...contactRows(['get', 'patch', 'delete'], '', { first_name: 'Taken' }),
  ...contactRows(['get', 'patch'], '/topics', undefined),
  ...contactRows(['get'], '/segments', undefined),
  'post /contacts/{idOrEmail}/segments/{segmentId}': (a, b) => contactInSegment(a, b),
  'delete /contacts/{idOrEmail}/segments/{segmentId}': (a, b) => contactInSegment(a, b),
  'post /segments': () => [{ path: '/segments', body: { name: 'Theirs' }, full: 'own' }],
  'get /segments': () => [{ path: '/segments', full: 'own' }],
  'get /segments/{id}': (a) => [{ path: `/segments/${a.segmentId}`, full: 'not_found' }],
  'patch /segments/{id}': (a) => [{ path: `/segments/${a.segmentId}`, body: { name: 'Taken' }, full: 'not_found' }],
  'delete /segments/{id}': (a) => [{ path: `/segments/${a.segmentId}`, full: 'not_found' }],
  'get /segments/{id}/contacts': (a) => [{ path: `/segments/${a.segmentId}/contacts`, full: 'not_found' }],
  'post /topics': () => [{ path: '/topics', body: { name: 'Theirs', default_subscription: 'opt_in' }, full: 'own' }],
  'get /topics': () => [{ path: '/topics', full: 'own' }],
  'get /topics/{id}': (a) => [{ path: `/topics/${a.topicId}`, full: 'not_found' }],
  'patch /topics/{id}': (a) => [{ path: `/topics/${a.topicId}`, body: { name: 'Taken' }, full: 'not_found' }],
  'delete /topics/{id}': (a) => [{ path: `/topics/${a.topicId}`, full: 'not_found' }],
  'post /contact-properties': () => [{ path: '/contact-properties', body: { key: 'tier', type: 'string', fallback_value: 'free' }, full: 'own' }],
  'get /contact-properties': () => [{ path: '/contact-properties', full: 'own' }],
  'get /contact-properties/{id}': (a) => [{ path: `/contact-properties/${a.propertyId}`, full: 'not_found' }],
  'patch /contact-properties/{id}': (a) => [{ path: `/contact-properties/${a.propertyId}`, body: { fallback_value: 'taken' }, full: 'not_found' }],
  'delete /contact-properties/{id}': (a) => [{ path: `/contact-properties/${a.propertyId}`, full: 'not_found' }],
  'post /audiences': () => [{ path: '/audiences', body: { name: 'Theirs' }, full: 'own' }],
  'get /audiences': () => [{ path: '/audiences', full: 'own' }],
  'get /audiences/{id}': (a) => [{ path: `/audiences/${a.segmentId}`, full: 'not_found' }],
  'delete /audiences/{id}': (a) => [{ path: `/audiences/${a.segmentId}`, full: 'not_found' }],
  'post /audiences/{id}/contacts': (a) => [{ path: `/audiences/${a.segmentId}/contacts`, body: { email: 'new@people.example' }, full: 'not_found' }],
  'get /audiences/{id}/contacts': (a) => [{ path: `/audiences/${a.segmentId}/contacts`, full: 'not_found' }],
  'get /audiences/{id}/contacts/{idOrEmail}': (a, b) => audienceContact(a, b),
  'patch /audiences/{id}/contacts/{idOrEmail}': (a, b) => audienceContact(a, b, { first_name: 'Taken' }),
  'delete /audiences/{id}/contacts/{idOrEmail}': (a, b) => audienceContact(a, b),
  'post /contacts/imports': (a) => [
    {
      path: '/contacts/imports',
      form: { file: 'email\ntheirs@people.example\n', segments: JSON.stringify([{ id: a.segmentId }]) },
      full: segmentUnknown,
    },
  ],
  'get /contacts/imports': () => [{ path: '/contacts/imports', full: 'own' }],
  'get /contacts/imports/{id}': (a) => [{ path: `/contacts/imports/${a.importId}`, full: 'not_found' }],
  'post /broadcasts': (a, b) => [
    { path: '/broadcasts', body: { from: b.team.from(), subject: 'Theirs', segment_id: a.segmentId, html: '<p>Hi</p>' }, full: segmentUnknown },
  ],
  'get /broadcasts': () => [{ path: '/broadcasts', full: 'own' }],
  'get /broadcasts/{id}': (a) => [{ path: `/broadcasts/${a.broadcastId}`, full: 'not_found' }],
  'patch /broadcasts/{id}': (a) => [{ path: `/broadcasts/${a.broadcastId}`, body: { subject: 'Taken' }, full: 'not_found' }],
  'delete /broadcasts/{id}': (a) => [{ path: `/broadcasts/${a.broadcastId}`, full: 'not_found' }],
  'post /broadcasts/{id}/send': (a) => [{ path: `/broadcasts/${a.broadcastId}/send`, full: 'not_found' }],
  'post /broadcasts/{id}/cancel': (a) => [{ path: `/broadcasts/${a.broadcastId}/cancel`, full: 'not_found' }],
  'post /broadcasts/{id}/duplicate': (a) => [{ path: `/broadcasts/${a.broadcastId}/duplicate`, full: 'not_found' }],
  'get /broadcasts/{id}/recipients': (a) => [
    { path: `/broadcasts/${a.broadcastId}/recipients?type=delivered`, full: 'not_found' },
    { path: `/broadcasts/${a.broadcastId}/recipients?type=unsubscribed&email=${encodeURIComponent(a.contactEmail)}`, full: 'not_found' },
  ],
  'get /broadcasts/{id}/clicked-links': (a) => [{ path: `/broadcasts/${a.broadcastId}/clicked-links`, full: 'not_found' }],
  'get /stats': (a) => [
    { path: '/stats', full: 'own' },
    { path: `/stats?domain_id=${a.team.domainId}`, full: 'not_found' },
  ],
};

/** A contact route (`/contacts/{idOrEmail}<suffix>`) asked about A's contact by id and by address. */
export function contactRows(methods: string[], suffix: string, body: unknown): Record<string, (a: Resources, b: Resources) => Probe[]> {
  const bodyOf = (method: string) =>
    method === 'patch' ? (suffix === '/topics' ? [{ id: randomUUID(), subscription: 'opt_out' }] : body) : undefined;
  return Object.fromEntries(
    methods.map((method) => [
      `${method} /contacts/{idOrEmail}${suffix}`,
      (a: Resources) => [
        { path: `/contacts/${a.contactId}${suffix}`, body: bodyOf(method), full: 'not_found' as const },
        { path: `/contacts/${encodeURIComponent(a.contactEmail)}${suffix}`, body: bodyOf(method), full: 'not_found' as const },
      ],
    ]),
  );
}

/** A's contact in A's segment, and B's contact in A's segment. */
export const contactInSegment = (a: Resources, b: Resources): Probe[] => [
  { path: `/contacts/${a.contactId}/segments/${a.segmentId}`, full: 'not_found' },
  { path: `/contacts/${b.contactId}/segments/${a.segmentId}`, full: 'not_found' },
  { path: `/contacts/${a.contactId}/segments/${b.segmentId}`, full: 'not_found' },
];

/** A's contact in A's audience, and B's contact in A's audience. */
export const audienceContact = (a: Resources, b: Resources, body?: unknown): Probe[] => [
  { path: `/audiences/${a.segmentId}/contacts/${a.contactId}`, body, full: 'not_found' },
  { path: `/audiences/${a.segmentId}/contacts/${encodeURIComponent(a.contactEmail)}`, body, full: 'not_found' },
  { path: `/audiences/${b.segmentId}/contacts/${a.contactId}`, body, full: 'not_found' },
];

/**
 * Routes anyone may call without a key: their token or id is the capability. The unsubscribe link
 * is in the document (security: none); an email's images are not (files fetched by mail clients).
 */
export const PUBLIC_ROUTES = ['get /images/{id}', 'get /unsubscribe/{token}', 'post /unsubscribe/{token}'];
export const segmentUnknown: Outcome = { status: 422, name: 'validation_error' };

export const SEND_ROUTES = ['post /emails', 'post /emails/batch'];
/** Dashboard routes anyone may read (no team data): sign-in choices, the regions to sign up in, the CSRF token. */
export const PUBLIC_DASHBOARD_ROUTES = ['get /dashboard/api/regions', 'get /dashboard/api/sign-in-providers', 'get /dashboard/api/csrf'];

export const refusedDomain: Outcome = { status: 403, name: 'validation_error' };
export const inHours = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString();
export const email = (from: string) => ({ from, to: 'someone@example.com', subject: 'Hello', text: 'Hi', scheduled_at: inHours(2) });
