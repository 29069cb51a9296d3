import { Inject, Injectable } from '@nestjs/common';
import { HeraldError, isUuid, newId } from '@herald/core';
import { addressAllowList } from './endpoint-address';
import { WebhookEventLogRepository } from './webhook-event-log.repository';
import { EndpointPolicy, validateCreateWebhook, validateUpdateWebhook, validateWebhookListQuery } from './webhook-input.validation';
import {
  type DeletedWebhook,
  presentDeletedWebhook,
  presentWebhook,
  presentWebhookList,
  presentWebhookReference,
  presentWebhookSecret,
  type WebhookBody,
  type WebhookList,
  type WebhookReference,
  type WebhookSecretBody,
} from './webhook.presenter';
import { newSigningSecret, ROTATION_OVERLAP_MS, signingSecrets } from './webhook-secrets';
import type { Webhook } from './webhook.types';
import { WebhooksRepository } from './webhooks.repository';
import { WEBHOOKS_CONFIG, WebhooksConfig } from './webhooks.config';

const notFound = () => new HeraldError('not_found', 'Webhook not found');

function assertId(id: string): void {
  if (!isUuid(id)) throw new HeraldError('invalid_parameter', 'The `id` must be a valid UUID.');
}

/** The /webhooks management API. Delivery (signing, retries, SSRF checks at connect time) is the dispatcher's. */
@Injectable()
export class WebhooksService {
  private readonly policy: EndpointPolicy;

  constructor(
    @Inject(WEBHOOKS_CONFIG.token) config: WebhooksConfig,
    private readonly webhooks: WebhooksRepository,
    private readonly eventLog: WebhookEventLogRepository,
  ) {
    this.policy = { allowHttp: config.WEBHOOK_ALLOW_HTTP, allowed: addressAllowList(config.WEBHOOK_ALLOWED_ADDRESSES) };
  }

  async create(teamId: string, body: unknown): Promise<WebhookSecretBody> {
    const input = validateCreateWebhook(body, this.policy);
    const webhook = await this.webhooks.create({ id: newId(), teamId, ...input, signingSecret: newSigningSecret() });
    return presentWebhookSecret(webhook);
  }

  async list(teamId: string, query: unknown): Promise<WebhookList> {
    return presentWebhookList(await this.webhooks.listPage(teamId, validateWebhookListQuery(query)));
  }

  async get(teamId: string, id: string): Promise<WebhookBody> {
    return presentWebhook(await this.find(teamId, id));
  }

  async update(teamId: string, id: string, body: unknown): Promise<WebhookReference> {
    assertId(id);
    const changes = validateUpdateWebhook(body, this.policy);
    const updated = await this.webhooks.update(teamId, id, changes);
    if (!updated) throw notFound();
    return presentWebhookReference(id);
  }

  /**
   * The webhook, then its messages and their attempts: they are the email plane's (issue 15), so
   * no foreign key cascades to them. Deleted even when no webhook was found, so a DELETE retried
   * after failing between the two finishes the first. The undelivered messages a crash between
   * the two leaves, or a fan-out makes for the webhook meanwhile, the dispatcher deletes when it
   * meets them (with the rest of the webhook's); settled ones a crash leaves, alone, stay, which
   * nothing reads (the event log asks for the webhook first).
   */
  async remove(teamId: string, id: string): Promise<DeletedWebhook> {
    assertId(id);
    const deleted = await this.webhooks.delete(teamId, id);
    await this.eventLog.deleteOfWebhook(teamId, id);
    if (!deleted) throw notFound();
    return presentDeletedWebhook(id);
  }

  /** A new current secret; the one it replaces keeps signing beside it for 24 hours. */
  async rotateSigningSecret(teamId: string, id: string, now: Date = new Date()): Promise<WebhookSecretBody> {
    assertId(id);
    const rotated = await this.webhooks.rotateSecret(teamId, id, newSigningSecret(), new Date(now.getTime() + ROTATION_OVERLAP_MS));
    if (!rotated) throw notFound();
    return presentWebhookSecret(rotated);
  }

  /** The secrets a delivery made at `now` is signed with, current first. */
  signingSecrets(webhook: Webhook, now: Date = new Date()): string[] {
    return signingSecrets(webhook, now);
  }

  /** The stored webhook (for the dispatcher and tests); throws not_found. */
  async find(teamId: string, id: string): Promise<Webhook> {
    assertId(id);
    const webhook = await this.webhooks.get(teamId, id);
    if (!webhook) throw notFound();
    return webhook;
  }
}
