import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { ContactsService, SegmentsService } from '@herald/contacts';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses, ApiIdParam, ApiJsonBody, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';

const BY_ID = { 404: 'Segment not found', 422: { name: 'invalid_parameter', message: 'The segment id must be a valid UUID.' } } as const;
const ID_ERRORS = [401, 403, 404, 422, 429] as const;
const ApiContactParam = () =>
  ApiParam({ name: 'idOrEmail', description: "The contact's id, or its email address (as it is).", schema: { type: 'string' } });
/** An operation kept for the SDKs that still call it: segments under their former name. */
const deprecated = (operationId: string, summary: string) => ApiOperation({ operationId, summary, deprecated: true });

/**
 * The older SDKs' /audiences paths: an audience is a segment, and /audiences/:id/contacts[/:idOrEmail]
 * are that segment's contacts (a contact created there joins the segment; one outside it is not found there).
 */
@ApiTags('audiences')
@UseGuards(ApiKeyGuard)
@Controller('audiences')
export class AudiencesController {
  constructor(
    private readonly segments: SegmentsService,
    private readonly contacts: ContactsService,
  ) {}

  @deprecated('createAudience', 'Create a segment (use POST /segments)')
  @ApiJsonBody('SegmentRequest')
  @ApiOk('CreateAudienceResponse', 'The new segment, as an audience.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'The `name` field is required.' } })
  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const segment = await this.segments.create(p.teamId, body);
    return { ...segment, object: 'audience' };
  }

  @deprecated('listAudiences', 'List segments (use GET /segments)')
  @ApiPageQuery('segment')
  @ApiOk('SegmentList', 'The segments, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.segments.list(p.teamId, query);
  }

  @deprecated('getAudience', 'Retrieve a segment (use GET /segments/{id})')
  @ApiIdParam('segment')
  @ApiOk('Audience', 'The segment, as an audience.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Get(':id')
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return { ...(await this.segments.get(p.teamId, id)), object: 'audience' };
  }

  @deprecated('deleteAudience', 'Delete a segment (use DELETE /segments/{id})')
  @ApiIdParam('segment')
  @ApiOk('DeletedAudience', 'Deleted.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Delete(':id')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return { ...(await this.segments.remove(p.teamId, id)), object: 'audience' };
  }

  @deprecated('createAudienceContact', 'Create a contact in a segment (use POST /contacts with `segments`)')
  @ApiIdParam('segment')
  @ApiJsonBody('CreateAudienceContactRequest')
  @ApiOk('ContactReference', 'The new contact.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Post(':id/contacts')
  @HttpCode(200)
  async createContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.contacts.create(p.teamId, body, p.team.homeRegion, await this.segments.existing(p.teamId, id));
  }

  @deprecated('listAudienceContacts', "A segment's contacts (use GET /segments/{id}/contacts)")
  @ApiIdParam('segment')
  @ApiPageQuery('contact')
  @ApiOk('ContactList', 'The contacts, newest first.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Get(':id/contacts')
  async listContacts(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.contacts.list(p.teamId, query, await this.segments.existing(p.teamId, id));
  }

  @deprecated('getAudienceContact', 'A contact of the segment (use GET /contacts/{idOrEmail})')
  @ApiIdParam('segment')
  @ApiContactParam()
  @ApiOk('Contact', 'The contact.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Get(':id/contacts/:idOrEmail')
  async getContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.get(p.teamId, idOrEmail, await this.segments.existing(p.teamId, id));
  }

  @deprecated('updateAudienceContact', 'Update a contact of the segment (use PATCH /contacts/{idOrEmail})')
  @ApiIdParam('segment')
  @ApiContactParam()
  @ApiJsonBody('UpdateContactRequest')
  @ApiOk('ContactReference', 'Updated.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Patch(':id/contacts/:idOrEmail')
  async updateContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('idOrEmail') idOrEmail: string, @Body() body: unknown) {
    return this.contacts.update(p.teamId, idOrEmail, body, p.team.homeRegion, await this.segments.existing(p.teamId, id));
  }

  @deprecated('deleteAudienceContact', 'Delete a contact of the segment (use DELETE /contacts/{idOrEmail})')
  @ApiIdParam('segment')
  @ApiContactParam()
  @ApiOk('DeletedContact', 'Deleted.')
  @ApiErrorResponses([...ID_ERRORS], BY_ID)
  @Delete(':id/contacts/:idOrEmail')
  async removeContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.remove(p.teamId, idOrEmail, p.team.homeRegion, await this.segments.existing(p.teamId, id));
  }
}
