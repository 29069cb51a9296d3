import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { API_KEY_PREFIX } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { sendLimitsOf } from '@herald/emails';
import { RESPONSE_HEADERS, withDeploymentExamples } from './error-responses';
import { componentSchemas, schemaRef } from './schemas';
import { UNSUBSCRIBE_ITEM, UNSUBSCRIBE_PATH } from './unsubscribe.paths';

/** The path /openapi.json is served at; the document describes it too. */
export const OPENAPI_PATH = '/openapi.json';

/** The settings the document states (limits, regions, the public URL). */
type OpenApiConfig = Pick<
  HeraldConfig,
  | 'PUBLIC_API_URL'
  | 'API_BODY_LIMIT_BYTES'
  | 'MAX_RECIPIENTS'
  | 'MAX_EMAIL_BYTES'
  | 'MAX_BATCH_SIZE'
  | 'MAX_SCHEDULE_DAYS'
  | 'HERALD_REGIONS'
  | 'IDEMPOTENCY_TTL_SECONDS'
  | 'RATE_LIMIT_DEFAULT'
>;

/**
 * The API's OpenAPI 3.1 document: the routes Nest reflects from the controllers' decorators,
 * the component schemas, and the unauthenticated operator routes described by hand.
 */
export function buildOpenApiDocument(app: INestApplication, config: OpenApiConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Herald API')
    .setDescription(description(config))
    .setVersion('1.0.0')
    .setOpenAPIVersion('3.1.0')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: `${API_KEY_PREFIX}...`,
        description: `An API key: \`Authorization: Bearer ${API_KEY_PREFIX}...\`.`,
      },
      'bearer',
    )
    .addSecurityRequirements('bearer')
    .addTag('emails', 'Send, read, reschedule and cancel emails.')
    .addTag('api-keys', 'Create, list, rename and delete API keys.')
    .addTag('domains', 'Add sending domains, read the DNS records to publish, verify them, rotate DKIM keys.')
    .addTag('suppressions', 'The team-wide suppression list: addresses Herald will not send to.')
    .addTag('webhooks', 'Endpoints that receive signed events, and their signing secrets.')
    .addTag('contacts', "A team's contacts (by id or address), their segments and topic subscriptions.")
    .addTag('segments', 'Groups of contacts that broadcasts go to (formerly audiences).')
    .addTag('topics', 'Subscription preferences offered to contacts.')
    .addTag('contact-properties', 'Typed custom fields of contacts, with fallbacks for merge tags.')
    .addTag('audiences', 'Deprecated: segments under their former name, for the SDKs that still call these paths.')
    .addTag('broadcasts', "Marketing emails to a segment's contacts: drafts, sending and scheduling, recipients and clicked links.")
    .addTag('stats', 'Sending metrics over time: volume, deliveries, bounces, complaints, opens and clicks (Herald extension).')
    .addTag(
      'unsubscribe',
      'The hosted unsubscribe link of broadcast emails (Herald extension): one-click (RFC 8058) and the preference page. No API key: the token is the credential.',
    )
    .addTag('operations', 'Probes, metrics and this document, for operators. No API key needed.');
  if (config.PUBLIC_API_URL) builder.addServer(config.PUBLIC_API_URL.replace(/\/+$/, ''));
  const base = builder.build();
  base.components = {
    ...base.components,
    schemas: componentSchemas({ limits: sendLimitsOf(config), regions: config.HERALD_REGIONS }),
    headers: RESPONSE_HEADERS,
  };
  const document = SwaggerModule.createDocument(app, base);
  return withDeploymentExamples(describeOperatorRoutes(document), config);
}

function description(config: OpenApiConfig): string {
  const hours = Math.round(config.IDEMPOTENCY_TTL_SECONDS / 360) / 10;
  return [
    "Herald is an open-source email delivery service. Its REST API is wire-compatible with Resend's: the official " +
      'Resend SDKs work against Herald once pointed at its base URL (in Node, `new Resend(key, { baseUrl })` or `RESEND_BASE_URL`).',
    '## Authentication',
    `Send an API key as \`Authorization: Bearer ${API_KEY_PREFIX}...\`. Keys are created with \`POST /api-keys\` and shown ` +
      'only once. A `sending_access` key may call only `POST /emails` and `POST /emails/batch`.',
    '## Responses',
    'Every success is `200` with a JSON body. Every error is JSON `{statusCode, name, message}`: branch on `name`. ' +
      'Timestamps are UTC in the form `2026-04-03 22:13:42.674981+00`.',
    '## Rate limits',
    `Each team may make ${config.RATE_LIMIT_DEFAULT} requests per second unless its plan says otherwise, shared by all its keys. ` +
      'Every authenticated response carries `ratelimit-limit`, `ratelimit-remaining` and `ratelimit-reset` (seconds); ' +
      'a `429` also carries `retry-after` (seconds).',
    '## Idempotency',
    `\`POST /emails\` and \`POST /emails/batch\` accept an \`Idempotency-Key\` header: a retry with the same key and body within ${hours} hours ` +
      'gets the first response back and sends nothing.',
  ].join('\n\n');
}

const publicGet = (operation: Omit<OperationObject, 'tags' | 'security'>): OperationObject => ({
  ...operation,
  tags: ['operations'],
  security: [],
});

/*
 * The health and metrics controllers live in libs/observability, which knows nothing of
 * OpenAPI, and /openapi.json is a plain Fastify route, so they are described here. They stay in
 * the document (tagged `operations`, no security) because the API does serve them.
 */
const OPERATOR_ROUTES: Record<string, OperationObject> = {
  '/health/live': publicGet({
    operationId: 'getLiveness',
    summary: 'Liveness probe',
    responses: {
      200: {
        description: 'The process is up.',
        content: { 'application/json': { schema: schemaRef('Liveness') } },
      },
    },
  }),
  '/health/ready': publicGet({
    operationId: 'getReadiness',
    summary: 'Readiness probe: Postgres and NATS reachable; Redis down is `degraded`, still ready',
    responses: {
      200: {
        description: 'Every critical dependency is up (status `degraded` when Redis is not).',
        content: { 'application/json': { schema: schemaRef('Readiness') } },
      },
      503: { description: 'A dependency is down.', content: { 'application/json': { schema: schemaRef('Readiness') } } },
    },
  }),
  [OPENAPI_PATH]: publicGet({
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI document',
    responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
  }),
};

/** Replaces what Nest reflected for these routes; a route the app does not serve stays out. */
function describeOperatorRoutes(document: OpenAPIObject): OpenAPIObject {
  const paths = { ...document.paths };
  for (const [path, get] of Object.entries(OPERATOR_ROUTES)) {
    if (paths[path] || path === OPENAPI_PATH) paths[path] = { get };
  }
  // Installed with the api role's routes (installUnsubscribeRoutes), outside Nest.
  paths[UNSUBSCRIBE_PATH] = UNSUBSCRIBE_ITEM;
  return { ...document, paths };
}
