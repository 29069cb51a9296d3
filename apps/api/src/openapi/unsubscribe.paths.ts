import type { OperationObject, PathItemObject } from '@nestjs/swagger';
import { schemaRef } from './schemas';

/*
 * The hosted unsubscribe link of broadcast emails (apps/api/src/broadcasts/unsubscribe.routes.ts):
 * plain Fastify routes, so described here. Herald extensions: no API key (the signed token in the
 * path is the credential), HTML for people, and RFC 8058's one-click POST for mail clients.
 */

const token = {
  name: 'token',
  in: 'path' as const,
  required: true,
  description: "The recipient's signed token, from the email's `List-Unsubscribe` header or `{{{RESEND_UNSUBSCRIBE_URL}}}`.",
  schema: { type: 'string' as const },
};
const page = (description: string) => ({ description, content: { 'text/html': { schema: schemaRef('UnsubscribePage') } } });
const NOT_FOUND = page('The token does not verify, or names no recipient any more: nothing changed.');

const pages = (operation: Omit<OperationObject, 'tags' | 'security' | 'parameters'>): OperationObject => ({
  ...operation,
  tags: ['unsubscribe'],
  security: [],
  parameters: [token],
});

export const UNSUBSCRIBE_PATH = '/unsubscribe/{token}';

export const UNSUBSCRIBE_ITEM: PathItemObject = {
  get: pages({
    operationId: 'getPreferencePage',
    summary: "The hosted preference page: the contact's topics, to drop one by one or all at once",
    responses: { 200: page('The page, with the team’s name.'), 404: NOT_FOUND },
  }),
  post: pages({
    operationId: 'unsubscribe',
    summary: 'One-click unsubscribe (RFC 8058), or the preference page’s form',
    description:
      'With `List-Unsubscribe=One-Click` (what mail clients send) or an empty body: unsubscribes at once, 200 and no redirect. ' +
      "The broadcast's topic is dropped when it has one, else the contact is unsubscribed from everything. " +
      "With the page's `action=all|save`: applies the form and answers the page. Each change emits `contact.updated`.",
    requestBody: { required: false, content: { 'application/x-www-form-urlencoded': { schema: schemaRef('UnsubscribeForm') } } },
    responses: { 200: page('Done: a page saying so.'), 404: NOT_FOUND },
  }),
};
