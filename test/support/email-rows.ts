import { newId } from '@herald/core';
import type { AcceptedEmail, NormalizedEmail } from '@herald/emails';

/* Shared by the email store's specs: an email as the send path writes it. */

/** A valid one-recipient email from `from@domain`, with what the spec changes. */
export const normalizedEmail = (from: string, domain: string, overrides: Partial<NormalizedEmail> = {}): NormalizedEmail => ({
  from,
  fromAddress: from,
  fromDomain: domain,
  to: ['jane@example.com'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 'Hello',
  html: '<p>hi</p>',
  text: null,
  headers: null,
  attachments: [],
  tags: null,
  scheduledAt: null,
  recipients: [{ kind: 'to', address: 'jane@example.com' }],
  sizeBytes: 0,
  ...overrides,
});

/** The row of a team's email in us-east-1; its own outbox row unless `dispatchId` names a shared one. */
export function newEmailRow(teamId: string, email: NormalizedEmail, dispatchId?: string): AcceptedEmail {
  const id = newId();
  return { id, teamId, region: 'us-east-1', source: 'api', apiKeyId: null, idempotencyKey: null, dispatchId: dispatchId ?? id, email };
}
