import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { WebhookEventsService, WebhooksService } from '@herald/webhooks';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import {
  ApiErrorResponses,
  ApiIdParam,
  ApiJsonBody,
  ApiOk,
  ApiPageQuery,
  ApiWebhookEventParam,
  ApiWebhookLogPageQuery,
} from '../openapi/openapi.decorators';

const BY_ID = { 404: 'Webhook not found', 422: { name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' } } as const;

/** Webhook endpoints. Full-access keys only: ApiKeyGuard refuses sending_access keys here. */
@ApiTags('webhooks')
@UseGuards(ApiKeyGuard)
@Controller('webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly events: WebhookEventsService,
  ) {}

  @ApiOperation({ operationId: 'createWebhook', summary: 'Add a webhook endpoint; the answer carries its signing secret' })
  @ApiJsonBody('CreateWebhookRequest')
  @ApiOk('WebhookSecret', 'The new webhook and its signing secret.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'Missing `endpoint` field.' } })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.webhooks.create(p.teamId, body);
  }

  @ApiOperation({ operationId: 'listWebhooks', summary: 'List webhooks, newest first' })
  @ApiPageQuery('webhook')
  @ApiOk('WebhookList', 'The webhooks, without their secrets.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.webhooks.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getWebhook', summary: 'Retrieve a webhook with its signing secret' })
  @ApiIdParam('webhook')
  @ApiOk('Webhook', 'The webhook.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.webhooks.get(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateWebhook', summary: 'Change the endpoint, the events or the status' })
  @ApiIdParam('webhook')
  @ApiJsonBody('UpdateWebhookRequest')
  @ApiOk('WebhookReference', 'Updated.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(p.teamId, id, body);
  }

  @ApiOperation({ operationId: 'deleteWebhook', summary: 'Delete a webhook' })
  @ApiIdParam('webhook')
  @ApiOk('DeletedWebhook', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.webhooks.remove(p.teamId, id);
  }

  @ApiOperation({
    operationId: 'rotateWebhookSigningSecret',
    summary: 'Rotate the signing secret',
    description: 'Answers the new secret. Deliveries are signed with the old secret too for 24 hours, so receivers can switch without losing events.',
  })
  @ApiIdParam('webhook')
  @ApiOk('WebhookSecret', 'The new signing secret.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Post(':id/signing-secret/rotate')
  @HttpCode(200)
  rotate(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.webhooks.rotateSigningSecret(p.teamId, id);
  }

  @ApiOperation({ operationId: 'listWebhookEvents', summary: "The webhook's event log (one entry per message), newest first" })
  @ApiIdParam('webhook')
  @ApiWebhookLogPageQuery('event id')
  @ApiOk('WebhookEventList', 'The events.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id/events')
  listEvents(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.events.list(p.teamId, id, query);
  }

  @ApiOperation({ operationId: 'getWebhookEvent', summary: 'Retrieve an event of the log with its payload' })
  @ApiIdParam('webhook')
  @ApiWebhookEventParam()
  @ApiOk('WebhookEvent', 'The event.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id/events/:eventId')
  getEvent(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('eventId') eventId: string) {
    return this.events.get(p.teamId, id, eventId);
  }

  @ApiOperation({
    operationId: 'replayWebhookEvent',
    summary: 'Deliver an event again',
    description:
      'Queues the event for delivery now under the same message id (receivers dedupe on it). A delivered or failed event gets a ' +
      'fresh attempt budget; one being attempted right now is left to that attempt. A disabled webhook delivers it once enabled.',
  })
  @ApiIdParam('webhook')
  @ApiWebhookEventParam()
  @ApiOk('WebhookEventReference', 'Queued.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Post(':id/events/:eventId/replay')
  @HttpCode(200)
  replayEvent(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('eventId') eventId: string) {
    return this.events.replay(p.teamId, id, eventId);
  }

  @ApiOperation({ operationId: 'listWebhookEventAttempts', summary: 'The delivery attempts of an event, newest first' })
  @ApiIdParam('webhook')
  @ApiWebhookEventParam()
  @ApiWebhookLogPageQuery('attempt id')
  @ApiOk('WebhookEventAttemptList', 'The attempts.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id/events/:eventId/attempts')
  listAttempts(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('eventId') eventId: string, @Query() query: unknown) {
    return this.events.attempts(p.teamId, id, eventId, query);
  }
}
