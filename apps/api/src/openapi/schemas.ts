import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { z } from 'zod';
import {
  apiKeyListSchema,
  apiKeyReferenceSchema,
  apiKeySchema,
  createApiKeyBody,
  createdApiKeySchema,
  deletedApiKeySchema,
  updateApiKeyBody,
} from '@herald/accounts';
import {
  createDomainBody,
  createdDomainSchema,
  deletedDomainSchema,
  domainListSchema,
  domainRecordSchema,
  domainReferenceSchema,
  domainSchema,
  domainSummarySchema,
  updateDomainBody,
} from '@herald/domains';
import {
  broadcastClickedLinkListSchema,
  broadcastClickedLinkSchema,
  broadcastListItemSchema,
  broadcastListSchema,
  broadcastRecipientListSchema,
  broadcastRecipientSchema,
  broadcastReferenceSchema,
  broadcastSchema,
  createBroadcastBody,
  deletedBroadcastSchema,
  sendBroadcastBody,
  unsubscribeFormSchema,
  unsubscribePageSchema,
  updateBroadcastBody,
} from '@herald/broadcasts';
import {
  audienceSchema,
  createAudienceContactBody,
  contactImportDetailSchema,
  contactImportListSchema,
  contactImportReferenceSchema,
  contactImportSchema,
  contactListItemSchema,
  contactListSchema,
  contactPropertyListSchema,
  contactPropertyReferenceSchema,
  contactPropertySchema,
  contactReferenceSchema,
  contactSchema,
  contactSegmentAddedSchema,
  contactSegmentRemovedSchema,
  contactTopicListSchema,
  contactTopicSchema,
  contactTopicsBody,
  contactTopicsUpdatedSchema,
  createContactBody,
  createdAudienceSchema,
  createdSegmentSchema,
  createPropertyBody,
  createTopicBody,
  deletedAudienceSchema,
  deletedContactPropertySchema,
  deletedContactSchema,
  deletedSegmentSchema,
  deletedTopicSchema,
  importFormSchema,
  segmentBody,
  segmentListItemSchema,
  segmentListSchema,
  segmentReferenceSchema,
  segmentSchema,
  topicListSchema,
  topicReferenceSchema,
  topicSchema,
  updateContactBody,
  updatePropertyBody,
  updateTopicBody,
} from '@herald/contacts';
import { statsSchema } from '@herald/metrics';
import {
  batchRequestSchema,
  batchResponseSchema,
  emailListSchema,
  emailReferenceSchema,
  emailSchema,
  emailSummarySchema,
  type SendLimits,
  sendEmailSchema,
  sendResponseSchema,
  updateEmailBody,
} from '@herald/emails';
import { errorBodySchema } from '@herald/http';
import { insightListSchema, insightSchema } from '@herald/insights';
import { livenessBodySchema, readinessBodySchema } from '@herald/observability';
import {
  addedSuppressionsSchema,
  addSuppressionBody,
  batchAddSuppressionsBody,
  batchRemoveSuppressionsBody,
  deletedSuppressionSchema,
  removedSuppressionsSchema,
  suppressionListEntrySchema,
  suppressionListSchema,
  suppressionSchema,
} from '@herald/suppressions';
import {
  addressAllowList,
  createWebhookSchema,
  deletedWebhookSchema,
  type EndpointPolicy,
  updateWebhookSchema,
  webhookEventAttemptListSchema,
  webhookEventAttemptSchema,
  webhookEventListSchema,
  webhookEventLogItemSchema,
  webhookEventReferenceSchema,
  webhookEventSchema,
  webhookListSchema,
  webhookReferenceSchema,
  webhookSchema,
  webhookSecretSchema,
  webhookSummarySchema,
} from '@herald/webhooks';

/*
 * The component schemas of /openapi.json, generated from the zod schemas the API itself parses
 * requests with (io: 'input': what a client may send) and builds responses with (io: 'output':
 * the presenters' shapes). Nothing here is written as JSON Schema. Limits and regions are the
 * deployment's, so a self-hosted document tells the truth.
 */

export interface DocumentedDeployment {
  limits: SendLimits;
  regions: readonly string[];
}

// The webhook policy only changes which endpoints pass, not the shape.
const DOCUMENTED_POLICY: EndpointPolicy = { allowHttp: false, allowed: addressAllowList([]) };

function requestSchemas({ limits, regions }: DocumentedDeployment) {
  const batchEmail = sendEmailSchema(limits, 'batch');
  return {
    SendEmailRequest: sendEmailSchema(limits, 'email'),
    BatchEmail: batchEmail,
    SendBatchRequest: batchRequestSchema(limits, batchEmail).meta({ example: [z.globalRegistry.get(batchEmail)?.example] }),
    UpdateEmailRequest: updateEmailBody(limits, new Date()),
    CreateApiKeyRequest: createApiKeyBody,
    UpdateApiKeyRequest: updateApiKeyBody,
    CreateDomainRequest: createDomainBody(regions),
    UpdateDomainRequest: updateDomainBody,
    CreateWebhookRequest: createWebhookSchema(DOCUMENTED_POLICY),
    UpdateWebhookRequest: updateWebhookSchema(DOCUMENTED_POLICY),
    AddSuppressionRequest: addSuppressionBody,
    AddSuppressionsRequest: batchAddSuppressionsBody,
    RemoveSuppressionsRequest: batchRemoveSuppressionsBody,
    CreateContactRequest: createContactBody,
    UpdateContactRequest: updateContactBody,
    UpdateContactTopicsRequest: contactTopicsBody,
    SegmentRequest: segmentBody,
    CreateTopicRequest: createTopicBody,
    UpdateTopicRequest: updateTopicBody,
    CreateContactPropertyRequest: createPropertyBody,
    UpdateContactPropertyRequest: updatePropertyBody,
    ImportContactsRequest: importFormSchema,
    CreateAudienceContactRequest: createAudienceContactBody,
    CreateBroadcastRequest: createBroadcastBody,
    UpdateBroadcastRequest: updateBroadcastBody,
    SendBroadcastRequest: sendBroadcastBody,
    UnsubscribeForm: unsubscribeFormSchema,
  };
}

const RESPONSE_SCHEMAS = {
  SendEmailResponse: sendResponseSchema,
  SendBatchResponse: batchResponseSchema,
  Email: emailSchema,
  EmailListItem: emailSummarySchema,
  EmailList: emailListSchema,
  EmailReference: emailReferenceSchema,
  Insight: insightSchema,
  InsightList: insightListSchema,
  CreateApiKeyResponse: createdApiKeySchema,
  ApiKey: apiKeySchema,
  ApiKeyList: apiKeyListSchema,
  ApiKeyReference: apiKeyReferenceSchema,
  DeletedApiKey: deletedApiKeySchema,
  CreateDomainResponse: createdDomainSchema,
  Domain: domainSchema,
  DomainListItem: domainSummarySchema,
  DomainList: domainListSchema,
  DomainRecord: domainRecordSchema,
  DomainReference: domainReferenceSchema,
  DeletedDomain: deletedDomainSchema,
  WebhookSecret: webhookSecretSchema,
  Webhook: webhookSchema,
  WebhookListItem: webhookSummarySchema,
  WebhookList: webhookListSchema,
  WebhookReference: webhookReferenceSchema,
  DeletedWebhook: deletedWebhookSchema,
  WebhookEventListItem: webhookEventLogItemSchema,
  WebhookEventList: webhookEventListSchema,
  WebhookEvent: webhookEventSchema,
  WebhookEventReference: webhookEventReferenceSchema,
  WebhookEventAttempt: webhookEventAttemptSchema,
  WebhookEventAttemptList: webhookEventAttemptListSchema,
  Suppression: suppressionSchema,
  SuppressionListItem: suppressionListEntrySchema,
  SuppressionList: suppressionListSchema,
  DeletedSuppression: deletedSuppressionSchema,
  AddedSuppressions: addedSuppressionsSchema,
  RemovedSuppressions: removedSuppressionsSchema,
  Contact: contactSchema,
  ContactListItem: contactListItemSchema,
  ContactList: contactListSchema,
  ContactReference: contactReferenceSchema,
  DeletedContact: deletedContactSchema,
  ContactTopic: contactTopicSchema,
  ContactTopicList: contactTopicListSchema,
  ContactTopicsUpdated: contactTopicsUpdatedSchema,
  ContactSegmentAdded: contactSegmentAddedSchema,
  ContactSegmentRemoved: contactSegmentRemovedSchema,
  Segment: segmentSchema,
  SegmentListItem: segmentListItemSchema,
  SegmentList: segmentListSchema,
  CreateSegmentResponse: createdSegmentSchema,
  SegmentReference: segmentReferenceSchema,
  DeletedSegment: deletedSegmentSchema,
  Topic: topicSchema,
  TopicList: topicListSchema,
  TopicReference: topicReferenceSchema,
  DeletedTopic: deletedTopicSchema,
  ContactProperty: contactPropertySchema,
  ContactPropertyList: contactPropertyListSchema,
  ContactPropertyReference: contactPropertyReferenceSchema,
  DeletedContactProperty: deletedContactPropertySchema,
  ContactImport: contactImportDetailSchema,
  ContactImportListItem: contactImportSchema,
  ContactImportList: contactImportListSchema,
  ContactImportReference: contactImportReferenceSchema,
  Audience: audienceSchema,
  CreateAudienceResponse: createdAudienceSchema,
  DeletedAudience: deletedAudienceSchema,
  Broadcast: broadcastSchema,
  BroadcastListItem: broadcastListItemSchema,
  BroadcastList: broadcastListSchema,
  BroadcastReference: broadcastReferenceSchema,
  DeletedBroadcast: deletedBroadcastSchema,
  BroadcastRecipient: broadcastRecipientSchema,
  BroadcastRecipientList: broadcastRecipientListSchema,
  BroadcastClickedLink: broadcastClickedLinkSchema,
  BroadcastClickedLinkList: broadcastClickedLinkListSchema,
  UnsubscribePage: unsubscribePageSchema,
  Error: errorBodySchema,
  Stats: statsSchema,
  Readiness: readinessBodySchema,
  Liveness: livenessBodySchema,
} satisfies Record<string, z.ZodType>;

export type RequestSchemaName = keyof ReturnType<typeof requestSchemas>;
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;
export type SchemaName = RequestSchemaName | ResponseSchemaName;

export const schemaRef = (name: SchemaName): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

/** Every component schema; a schema registered under a name is referenced by it wherever it is nested. */
export function componentSchemas(deployment: DocumentedDeployment): Record<SchemaName, SchemaObject> {
  return { ...jsonSchemas(requestSchemas(deployment), 'input'), ...jsonSchemas(RESPONSE_SCHEMAS, 'output') };
}

function jsonSchemas<N extends string>(schemas: Record<N, z.ZodType>, io: 'input' | 'output'): Record<N, SchemaObject> {
  const registry = z.registry<{ id?: string }>();
  for (const [id, schema] of Object.entries<z.ZodType>(schemas)) registry.add(schema, { id });
  const { schemas: json } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` });
  const entries = Object.entries(json).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema as SchemaObject]);
  return Object.fromEntries(entries) as Record<N, SchemaObject>;
}
