import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { EmailsService, parseBatchValidationMode, SendService, senderOf } from '@herald/emails';
import { InsightsService } from '@herald/insights';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { validateIdempotencyKey } from '@herald/idempotency';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal, SendingEndpoint } from '../auth/principal';
import {
  ApiBatchValidationHeader,
  ApiErrorResponses,
  ApiIdempotencyKeyHeader,
  ApiIdParam,
  ApiJsonBody,
  ApiOk,
  ApiPageQuery,
} from '../openapi/openapi.decorators';

const BY_ID = { 404: 'Email not found', 422: { name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' } } as const;

@ApiTags('emails')
@UseGuards(ApiKeyGuard)
@Controller('emails')
export class EmailsController {
  constructor(
    private readonly send: SendService,
    private readonly emails: EmailsService,
    private readonly insights: InsightsService,
  ) {}

  @ApiOperation({ operationId: 'sendEmail', summary: 'Send an email' })
  @ApiIdempotencyKeyHeader()
  @ApiJsonBody('SendEmailRequest')
  @ApiOk('SendEmailResponse', 'Accepted for delivery (or scheduled); the id of the email.')
  @ApiErrorResponses([400, 401, 403, 409, 413, 422, 429, 503])
  @Post()
  @HttpCode(200)
  @SendingEndpoint()
  // Spelled as @ApiIdempotencyKeyHeader names it, which merges by exact name; Nest lowercases it to read the header.
  sendOne(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Headers('Idempotency-Key') key?: string) {
    return this.send.send(senderOf(p), body, validateIdempotencyKey(key));
  }

  @ApiOperation({ operationId: 'sendBatchEmails', summary: 'Send a batch of emails in one request' })
  @ApiIdempotencyKeyHeader()
  @ApiBatchValidationHeader()
  @ApiJsonBody('SendBatchRequest')
  @ApiOk('SendBatchResponse', 'The ids of the accepted emails, in input order.')
  @ApiErrorResponses([400, 401, 403, 409, 413, 422, 429, 503], { 422: 'The request body must be an array of emails.' })
  @Post('batch')
  @HttpCode(200)
  @SendingEndpoint()
  sendBatch(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Headers('Idempotency-Key') key?: string,
    @Headers('x-batch-validation') validation?: string,
  ) {
    const mode = parseBatchValidationMode(validation);
    if (!mode.ok) throw mode.error;
    return this.send.sendBatch(senderOf(p), body, mode.value, validateIdempotencyKey(key));
  }

  @ApiOperation({ operationId: 'listEmails', summary: 'List emails, newest first' })
  @ApiPageQuery('email')
  @ApiOk('EmailList', 'A page of emails.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.emails.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getEmail', summary: 'Retrieve an email' })
  @ApiIdParam('email')
  @ApiOk('Email', 'The email.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.emails.get(p.teamId, id);
  }

  @ApiOperation({
    operationId: 'getEmailInsights',
    summary: 'Deliverability insights of an email (Herald extension)',
    description:
      'What in this email, its sending domain and its recipients may hurt delivery, and what happened to it ' +
      '(bounces, complaints, deferrals, delivery without TLS), each with what was found and how to fix it; ' +
      '`attention` first. The content findings are computed the first time they are asked for and kept: the same ' +
      'email answers the same findings later. An empty list when there is nothing to fix.',
  })
  @ApiIdParam('email')
  @ApiOk('InsightList', 'The findings, attention first.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id/insights')
  insightsOf(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.insights.forEmail(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateEmail', summary: 'Reschedule a scheduled email' })
  @ApiIdParam('email')
  @ApiJsonBody('UpdateEmailRequest')
  @ApiOk('EmailReference', 'Rescheduled.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.emails.reschedule(p.teamId, id, body);
  }

  @ApiOperation({ operationId: 'cancelEmail', summary: 'Cancel a scheduled email' })
  @ApiIdParam('email')
  @ApiOk('EmailReference', 'Canceled.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.emails.cancel(p.teamId, id);
  }
}
