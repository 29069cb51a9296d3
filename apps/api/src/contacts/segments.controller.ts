import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiErrorResponses, ApiIdParam, ApiJsonBody, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';
import type { Principal } from '@herald/accounts';
import { ContactsService, SegmentsService } from '@herald/contacts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

const BY_ID = { 404: 'Segment not found', 422: { name: 'invalid_parameter', message: 'The segment id must be a valid UUID.' } } as const;

/** /segments, and a segment's contacts (GET /segments/:id/contacts, which the SDK's contacts.list({segmentId}) calls). */
@ApiTags('segments')
@UseGuards(ApiKeyGuard)
@Controller('segments')
export class SegmentsController {
  constructor(
    private readonly segments: SegmentsService,
    private readonly contacts: ContactsService,
  ) {}

  @ApiOperation({ operationId: 'createSegment', summary: 'Create a segment' })
  @ApiJsonBody('SegmentRequest')
  @ApiOk('CreateSegmentResponse', 'The new segment.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'The `name` field is required.' } })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.segments.create(p.teamId, body);
  }

  @ApiOperation({ operationId: 'listSegments', summary: 'List segments, newest first' })
  @ApiPageQuery('segment')
  @ApiOk('SegmentList', 'The segments, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.segments.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getSegment', summary: 'Retrieve a segment' })
  @ApiIdParam('segment')
  @ApiOk('Segment', 'The segment.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.segments.get(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateSegment', summary: 'Rename a segment' })
  @ApiIdParam('segment')
  @ApiJsonBody('SegmentRequest')
  @ApiOk('SegmentReference', 'Renamed.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Patch(':id')
  rename(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.segments.rename(p.teamId, id, body);
  }

  @ApiOperation({ operationId: 'deleteSegment', summary: 'Delete a segment (its contacts stay)' })
  @ApiIdParam('segment')
  @ApiOk('DeletedSegment', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.segments.remove(p.teamId, id);
  }

  @ApiOperation({ operationId: 'listSegmentContacts', summary: "A segment's contacts, newest first" })
  @ApiIdParam('segment')
  @ApiPageQuery('contact')
  @ApiOk('ContactList', 'The contacts, newest first.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id/contacts')
  async members(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.contacts.list(p.teamId, query, await this.segments.existing(p.teamId, id));
  }
}
