import { randomUUID } from 'node:crypto';
import type { DashboardClient } from '../support/dashboard-client';

/**
 * The dashboard's isolation matrix (team-isolation.e2e-spec.ts): for every route under
 * /dashboard/api/teams/{teamId}, what a team's owner asks of it, on their own team, about another
 * team's resources, and what they must get.
 */

/** One team of the matrix: its owner's session and one resource of each kind the dashboard serves. */
export interface TeamResources {
  label: string;
  client: DashboardClient;
  teamId: string;
  userId: string;
  ownerEmail: string;
  domainId: string;
  domainName: string;
  emailId: string;
  keyId: string;
  webhookId: string;
  webhookEndpoint: string;
  messageId: string;
  suppressionId: string;
  suppressedEmail: string;
  contactId: string;
  contactEmail: string;
  segmentId: string;
  topicId: string;
  propertyId: string;
  importId: string;
  broadcastId: string;
  invitationId: string;
}

/**
 * What the caller gets: `not_found` (404, as for an id that does not exist), `own` (2xx, and
 * nothing of the other team in the body: a list or a create that touches only the caller's own
 * team), or an exact error.
 */
export type Outcome = 'not_found' | 'own' | { status: number; name: string };
export interface Probe {
  path: string;
  /** JSON, or a form for the multipart routes. */
  body?: unknown;
  outcome: Outcome;
}
type Row = (theirs: TeamResources, mine: TeamResources) => Probe[];

/** Where every route of the matrix lives; ROWS are keyed by `method <path after it>`. */
export const TEAM_PREFIX = '/dashboard/api/teams/{teamId}';

const one =
  (path: (t: TeamResources) => string, outcome: Outcome = 'not_found', body?: (t: TeamResources, m: TeamResources) => unknown): Row =>
  (t, m) => [{ path: path(t), outcome, body: body?.(t, m) }];
const own =
  (path: string, body?: (t: TeamResources, m: TeamResources) => unknown): Row =>
  (t, m) => [{ path, outcome: 'own', body: body?.(t, m) }];

/** A route on one of the other team's webhook messages: under their webhook, and under the caller's own. */
const message =
  (suffix: string): Row =>
  (t, m) => [
    { path: `/webhooks/${t.webhookId}/messages/${t.messageId}${suffix}`, outcome: 'not_found' },
    { path: `/webhooks/${m.webhookId}/messages/${t.messageId}${suffix}`, outcome: 'not_found' },
  ];
/** A route on the other team's contact, by id and by address. */
const contact =
  (body?: unknown): Row =>
  (t) => [
    { path: `/contacts/${t.contactId}`, outcome: 'not_found', body },
    { path: `/contacts/${encodeURIComponent(t.contactEmail)}`, outcome: 'not_found', body },
  ];

/** A 1×1 PNG, for the editor's image upload. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A CSV of one row: the other team's contact address, imported into the caller's team. */
export function contactsCsv(email: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([`email,first_name\n${email},Imported\n`], { type: 'text/csv' }), 'contacts.csv');
  return form;
}

/**
 * Every team route, what the caller asks of it about the other team. A route of the router
 * without a row fails the suite (and a row without a route), so a new dashboard route cannot
 * ship without saying how it keeps teams apart.
 */
export const ROWS: Record<string, Row> = {
  'get /domains': own('/domains'),
  'post /domains': (t) => [{ path: '/domains', body: { name: t.domainName }, outcome: { status: 403, name: 'validation_error' } }],
  'get /domains/{id}': one((t) => `/domains/${t.domainId}`),
  'delete /domains/{id}': one((t) => `/domains/${t.domainId}`),
  'post /domains/{id}/verify': one((t) => `/domains/${t.domainId}/verify`),
  'post /domains/{id}/resume': one((t) => `/domains/${t.domainId}/resume`),
  'post /domains/{id}/dkim/rotate': one((t) => `/domains/${t.domainId}/dkim/rotate`),

  'get /emails': (t) => [
    { path: '/emails', outcome: 'own' },
    { path: `/emails?domain_id=${t.domainId}`, outcome: 'not_found' },
    // Keys are deleted when revoked, yet their emails keep the key's id and stay filterable by it: an id that
    // is not a live key of the team (another team's, or a revoked one) filters the caller's own emails, and shows none of the other's.
    { path: `/emails?api_key_id=${t.keyId}`, outcome: 'own' },
    { path: `/emails?q=${encodeURIComponent(t.ownerEmail)}`, outcome: 'own' },
  ],
  'get /emails/{id}': one((t) => `/emails/${t.emailId}`),
  'get /emails/{id}/insights': one((t) => `/emails/${t.emailId}/insights`),
  'get /emails/{id}/raw': one((t) => `/emails/${t.emailId}/raw`),

  'get /api-keys': own('/api-keys'),
  'post /api-keys': (t) => [
    {
      path: '/api-keys',
      body: { name: 'theirs', permission: 'sending_access', domain_id: t.domainId },
      outcome: { status: 422, name: 'validation_error' },
    },
  ],
  'delete /api-keys/{id}': one((t) => `/api-keys/${t.keyId}`),

  'get /webhooks': own('/webhooks'),
  'post /webhooks': own('/webhooks', (t) => ({ endpoint: t.webhookEndpoint, events: ['email.sent'] })),
  'get /webhooks/{id}': one((t) => `/webhooks/${t.webhookId}`),
  'patch /webhooks/{id}': one(
    (t) => `/webhooks/${t.webhookId}`,
    'not_found',
    () => ({ endpoint: 'https://attacker.example/hook', status: 'enabled' }),
  ),
  'delete /webhooks/{id}': one((t) => `/webhooks/${t.webhookId}`),
  'get /webhooks/{id}/secret': one((t) => `/webhooks/${t.webhookId}/secret`),
  'post /webhooks/{id}/secret/rotate': one((t) => `/webhooks/${t.webhookId}/secret/rotate`),
  'get /webhooks/{id}/messages': (t, m) => [
    { path: `/webhooks/${t.webhookId}/messages`, outcome: 'not_found' },
    { path: `/webhooks/${m.webhookId}/messages`, outcome: 'own' },
  ],
  'get /webhooks/{id}/messages/{messageId}': message(''),
  'get /webhooks/{id}/messages/{messageId}/attempts': message('/attempts'),
  'post /webhooks/{id}/messages/{messageId}/replay': message('/replay'),

  'get /suppressions': (t) => [
    { path: '/suppressions', outcome: 'own' },
    { path: `/suppressions?q=${t.suppressionId}`, outcome: 'own' },
    { path: `/suppressions?q=${encodeURIComponent(t.suppressedEmail)}`, outcome: 'own' },
  ],
  'post /suppressions': own('/suppressions', (t) => ({ email: t.suppressedEmail })),
  'delete /suppressions/{id}': (t) => [
    { path: `/suppressions/${t.suppressionId}`, outcome: 'not_found' },
    { path: `/suppressions/${encodeURIComponent(t.suppressedEmail)}`, outcome: 'not_found' },
  ],

  'get /contacts': (t) => [
    { path: '/contacts', outcome: 'own' },
    { path: `/contacts?q=${encodeURIComponent(t.contactEmail)}`, outcome: 'own' },
    { path: `/contacts?segment_id=${t.segmentId}`, outcome: 'own' },
  ],
  'get /contacts/{id}': contact(),
  'delete /contacts/{id}': contact(),
  'get /segments': own('/segments'),
  'get /topics': own('/topics'),
  'get /contact-properties': own('/contact-properties'),
  'post /contact-imports': own('/contact-imports', (t) => contactsCsv(t.contactEmail)),
  'get /contact-imports': own('/contact-imports'),
  'get /contact-imports/{id}': one((t) => `/contact-imports/${t.importId}`),

  'post /broadcasts': (t, m) => [
    {
      path: '/broadcasts',
      body: { from: `news@${m.domainName}`, subject: 'Theirs', segment_id: t.segmentId, html: '<p>Hi</p>' },
      outcome: { status: 422, name: 'validation_error' },
    },
  ],
  'get /broadcasts': own('/broadcasts'),
  'post /broadcasts/preview': own('/broadcasts/preview', () => ({ html: '<p>Hi {{{FIRST_NAME|there}}}</p>' })),
  'get /broadcasts/{id}': one((t) => `/broadcasts/${t.broadcastId}`),
  'patch /broadcasts/{id}': one(
    (t) => `/broadcasts/${t.broadcastId}`,
    'not_found',
    () => ({ subject: 'Taken' }),
  ),
  'delete /broadcasts/{id}': one((t) => `/broadcasts/${t.broadcastId}`),
  'post /broadcasts/{id}/test': one(
    (t) => `/broadcasts/${t.broadcastId}/test`,
    'not_found',
    (_, m) => ({ to: m.ownerEmail }),
  ),
  'post /broadcasts/{id}/send': one((t) => `/broadcasts/${t.broadcastId}/send`),
  'post /broadcasts/{id}/cancel': one((t) => `/broadcasts/${t.broadcastId}/cancel`),
  'post /images': own('/images', () => ({ content_type: 'image/png', content: PNG, filename: 'dot.png' })),

  'get /members': own('/members'),
  'patch /members/{userId}': one(
    (t) => `/members/${t.userId}`,
    'not_found',
    () => ({ role: 'member' }),
  ),
  'delete /members/{userId}': one((t) => `/members/${t.userId}`),
  'get /invitations': own('/invitations'),
  'post /invitations': own('/invitations', () => ({ email: `invited-${randomUUID().slice(0, 8)}@people.test`, role: 'member' })),
  'delete /invitations/{id}': one((t) => `/invitations/${t.invitationId}`),
  'get /usage': own('/usage'),
  'get /audit-log': own('/audit-log?limit=100'),
  'get /stats': (t) => [
    { path: '/stats', outcome: 'own' },
    { path: `/stats?domain_id=${t.domainId}`, outcome: 'not_found' },
  ],
};

/** Strings that would betray a team in another team's answer. */
export const markersOf = (t: TeamResources): string[] => [
  t.teamId,
  t.userId,
  t.ownerEmail,
  t.domainId,
  t.domainName,
  t.emailId,
  t.keyId,
  t.webhookId,
  t.webhookEndpoint,
  t.messageId,
  t.suppressionId,
  t.suppressedEmail,
  t.contactId,
  t.contactEmail,
  t.segmentId,
  t.topicId,
  t.propertyId,
  t.importId,
  t.broadcastId,
  t.invitationId,
];
