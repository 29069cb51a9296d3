import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { EmailsService, parseBatchValidationMode, SendService } from '@herald/emails';
import { validateIdempotencyKey } from '@herald/idempotency';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal, SendingEndpoint, senderOf } from '../auth/principal';

@ApiTags('emails')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('emails')
export class EmailsController {
  constructor(
    private readonly send: SendService,
    private readonly emails: EmailsService,
  ) {}

  @ApiOperation({ summary: 'Send an email' })
  @Post()
  @HttpCode(200)
  @SendingEndpoint()
  sendOne(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Headers('idempotency-key') key?: string) {
    return this.send.send(senderOf(p), body, validateIdempotencyKey(key));
  }

  @ApiOperation({ summary: 'Send up to 100 emails in one request' })
  @Post('batch')
  @HttpCode(200)
  @SendingEndpoint()
  sendBatch(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Headers('idempotency-key') key?: string,
    @Headers('x-batch-validation') validation?: string,
  ) {
    const mode = parseBatchValidationMode(validation);
    if (!mode.ok) throw mode.error;
    return this.send.sendBatch(senderOf(p), body, mode.value, validateIdempotencyKey(key));
  }

  @ApiOperation({ summary: 'List emails, newest first' })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.emails.list(p.teamId, query);
  }

  @ApiOperation({ summary: 'Retrieve an email' })
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.emails.get(p.teamId, id);
  }

  @ApiOperation({ summary: 'Reschedule a scheduled email' })
  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.emails.reschedule(p.teamId, id, body);
  }

  @ApiOperation({ summary: 'Cancel a scheduled email' })
  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.emails.cancel(p.teamId, id);
  }
}
