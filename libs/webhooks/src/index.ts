export * from './webhook.types';
export * from './webhooks.repository';
export * from './webhooks.service';
export * from './webhooks.module';
export * from './webhook-event-log.repository';
export * from './webhook-events.service';
export * from './webhook.presenter';
export * from './webhook-event.presenter';
export * from './webhook-secrets';
export { addressAllowList, classifyHost, hostAllowed, type AddressAllowList, type AddressClass } from './endpoint-address';
export {
  MAX_ENDPOINT_LENGTH,
  createWebhookSchema,
  updateWebhookSchema,
  validateCreateWebhook,
  validateUpdateWebhook,
  validateWebhookListQuery,
  type CreateWebhookInput,
  type EndpointPolicy,
  type UpdateWebhookInput,
  type WebhookPage,
} from './webhook-input.validation';
export * from './webhook-dispatch.options';
export * from './webhook-messages.repository';
export * from './webhook-claims.repository';
export * from './webhook-fan-out.service';
export * from './webhook-dispatcher.service';
export * from './webhook-dispatch.module';
export {
  checkedAddress,
  DEFAULT_ENDPOINT_CONNECTIONS,
  EndpointConnections,
  postWebhook,
  RESPONSE_EXCERPT_BYTES,
  type EndpointConnectionsOptions,
  type HttpAttemptResult,
  type HttpAttemptRequest,
  type ResolveAll,
} from './webhook-http.client';
