export * from './webhook.types';
export * from './webhooks.repository';
export * from './webhooks.service';
export * from './webhooks.module';
export * from './webhook.presenter';
export * from './webhook-secrets';
export { classifyHost, type AddressClass } from './endpoint-address';
export {
  MAX_ENDPOINT_LENGTH,
  validateCreateWebhook,
  validateEndpoint,
  validateEvents,
  validateUpdateWebhook,
  validateWebhookListQuery,
  type CreateWebhookInput,
  type EndpointPolicy,
  type UpdateWebhookInput,
  type WebhookPage,
} from './webhook-input.validation';
