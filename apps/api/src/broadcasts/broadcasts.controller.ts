import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { BOUNCE_TYPES, broadcastRef, BroadcastReportsService, BroadcastsService, RECIPIENT_TYPES } from '@herald/broadcasts';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses, ApiIdParam, ApiJsonBody, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';

const BY_ID = { 404: 'Broadcast not found', 422: { name: 'invalid_parameter', message: 'The broadcast id must be a valid UUID.' } } as const;
const ID_ERRORS = [401, 403, 404, 422, 429] as const;

/**
 * Broadcasts (API.md §11), Resend's paths and shapes. Full-access keys only, as at Resend: a
 * sending_access key may call the two send endpoints alone, so ApiKeyGuard answers it 401
 * `restricted_api_key` here.
 */
@ApiTags('broadcasts')
@UseGuards(ApiKeyGuard)
@Controller('broadcasts')
export class BroadcastsController {
  constructor(
    private readonly broadcasts: BroadcastsService,
    private readonly reports: BroadcastReportsService,
  ) {}

  @ApiOperation({ operationId: 'createBroadcast', summary: 'Create a broadcast to a segment: a draft, or sent now or at `scheduled_at`' })
  @ApiJsonBody('CreateBroadcastRequest')
  @ApiOk('BroadcastReference', 'The new broadcast.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'Missing `from` field.' } })
  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return broadcastRef((await this.broadcasts.create(p.teamId, body)).id);
  }

  @ApiOperation({ operationId: 'listBroadcasts', summary: 'List broadcasts, newest first' })
  @ApiPageQuery('broadcast')
  @ApiOk('BroadcastList', 'The broadcasts, newest first (without their bodies).')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.broadcasts.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getBroadcast', summary: 'Retrieve a broadcast, with its bodies and counts' })
  @ApiIdParam('broadcast')
  @ApiOk('Broadcast', 'The broadcast.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.broadcasts.get(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateBroadcast', summary: 'Update a draft' })
  @ApiIdParam('broadcast')
  @ApiJsonBody('UpdateBroadcastRequest')
  @ApiOk('BroadcastReference', 'Updated.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Patch(':id')
  async update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return broadcastRef((await this.broadcasts.update(p.teamId, id, body)).id);
  }

  @ApiOperation({ operationId: 'sendBroadcast', summary: 'Send a draft now, or schedule it' })
  @ApiIdParam('broadcast')
  @ApiJsonBody('SendBroadcastRequest')
  @ApiOk('BroadcastReference', 'Queued, or scheduled.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Post(':id/send')
  @HttpCode(200)
  async send(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return broadcastRef((await this.broadcasts.send(p.teamId, id, body)).id);
  }

  @ApiOperation({ operationId: 'cancelBroadcast', summary: 'Cancel a scheduled broadcast before its fan-out begins' })
  @ApiIdParam('broadcast')
  @ApiOk('BroadcastReference', 'Cancelled.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Post(':id/cancel')
  @HttpCode(200)
  async cancel(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return broadcastRef((await this.broadcasts.cancel(p.teamId, id)).id);
  }

  @ApiOperation({ operationId: 'duplicateBroadcast', summary: "A new draft with the broadcast's content" })
  @ApiIdParam('broadcast')
  @ApiOk('BroadcastReference', 'The new draft.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Post(':id/duplicate')
  @HttpCode(200)
  async duplicate(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return broadcastRef((await this.broadcasts.duplicate(p.teamId, id)).id);
  }

  @ApiOperation({ operationId: 'deleteBroadcast', summary: 'Delete a draft or a cancelled broadcast' })
  @ApiIdParam('broadcast')
  @ApiOk('DeletedBroadcast', 'Deleted.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.broadcasts.remove(p.teamId, id);
  }

  @ApiOperation({ operationId: 'listBroadcastRecipients', summary: 'The recipients who had an event (sent, delivered, opened, clicked, …)' })
  @ApiIdParam('broadcast')
  @ApiQuery({ name: 'type', required: true, description: 'The event.', schema: { type: 'string', enum: [...RECIPIENT_TYPES] } })
  @ApiQuery({ name: 'email', required: false, description: 'Only this recipient.', schema: { type: 'string', format: 'email' } })
  @ApiQuery({
    name: 'bounce_type',
    required: false,
    description: 'With `type=bounced`: only this kind of bounce.',
    schema: { type: 'string', enum: [...BOUNCE_TYPES] },
  })
  @ApiPageQuery('recipient')
  @ApiOk('BroadcastRecipientList', 'The recipients, newest email first.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Get(':id/recipients')
  recipients(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.reports.listRecipients(p.teamId, id, query);
  }

  @ApiOperation({ operationId: 'listBroadcastClickedLinks', summary: "The links clicked in the broadcast's emails, by URL" })
  @ApiIdParam('broadcast')
  @ApiPageQuery('link', { cursor: { type: 'string', description: 'The `id` of a link of this list.' } })
  @ApiOk('BroadcastClickedLinkList', 'The links, by URL.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Get(':id/clicked-links')
  clickedLinks(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.reports.listClickedLinks(p.teamId, id, query);
  }
}
