import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiErrorResponses, ApiJsonBody, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';
import type { Principal } from '@herald/accounts';
import { ContactMembershipsService, ContactsService } from '@herald/contacts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

const BY_ID_OR_EMAIL = {
  404: 'Contact not found',
  422: { name: 'invalid_parameter', message: 'The contact must be given by its id (a UUID) or its email address.' },
} as const;
const ApiContactParam = () =>
  ApiParam({
    name: 'idOrEmail',
    description: "The contact's id, or its email address (as it is, e.g. `jane+news@example.com`).",
    schema: { type: 'string' },
  });
const ApiSegmentParam = () => ApiParam({ name: 'segmentId', description: "The segment's id.", schema: { type: 'string', format: 'uuid' } });

/**
 * /contacts (API.md §11): a contact is named by its id or its address, raw in the path. The
 * literal `imports` routes (ContactImportsController) win over `:idOrEmail` (the router prefers
 * static segments; an address always has an `@`). Full-access keys only: ApiKeyGuard refuses
 * sending_access keys.
 */
@ApiTags('contacts')
@UseGuards(ApiKeyGuard)
@Controller('contacts')
export class ContactsController {
  constructor(
    private readonly contacts: ContactsService,
    private readonly memberships: ContactMembershipsService,
  ) {}

  @ApiOperation({ operationId: 'createContact', summary: 'Create a contact (one per address), in segments and topics if given' })
  @ApiJsonBody('CreateContactRequest')
  @ApiOk('ContactReference', 'The new contact.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'The `email` field is required.' } })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.contacts.create(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'listContacts', summary: 'List contacts, newest first' })
  @ApiPageQuery('contact')
  @ApiOk('ContactList', 'The contacts, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.contacts.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getContact', summary: 'Retrieve a contact by id or address, with its properties' })
  @ApiContactParam()
  @ApiOk('Contact', 'The contact.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Get(':idOrEmail')
  get(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.get(p.teamId, idOrEmail);
  }

  @ApiOperation({ operationId: 'updateContact', summary: "Update a contact's names, unsubscribed flag or properties (null clears)" })
  @ApiContactParam()
  @ApiJsonBody('UpdateContactRequest')
  @ApiOk('ContactReference', 'Updated.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Patch(':idOrEmail')
  update(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Body() body: unknown) {
    return this.contacts.update(p.teamId, idOrEmail, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'deleteContact', summary: 'Delete a contact' })
  @ApiContactParam()
  @ApiOk('DeletedContact', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Delete(':idOrEmail')
  remove(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.remove(p.teamId, idOrEmail, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'listContactTopics', summary: "Every topic with the contact's subscription" })
  @ApiContactParam()
  @ApiPageQuery('topic')
  @ApiOk('ContactTopicList', 'The topics.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Get(':idOrEmail/topics')
  topics(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Query() query: unknown) {
    return this.memberships.listTopics(p.teamId, idOrEmail, query);
  }

  @ApiOperation({ operationId: 'updateContactTopics', summary: "Set the contact's subscription to topics (a bare array)" })
  @ApiContactParam()
  @ApiJsonBody('UpdateContactTopicsRequest')
  @ApiOk('ContactTopicsUpdated', 'Updated.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Patch(':idOrEmail/topics')
  updateTopics(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Body() body: unknown) {
    return this.memberships.updateTopics(p.teamId, idOrEmail, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'listContactSegments', summary: 'The segments a contact is in' })
  @ApiContactParam()
  @ApiPageQuery('segment')
  @ApiOk('SegmentList', 'The segments.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Get(':idOrEmail/segments')
  segments(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Query() query: unknown) {
    return this.memberships.listSegments(p.teamId, idOrEmail, query);
  }

  @ApiOperation({ operationId: 'addContactToSegment', summary: 'Add a contact to a segment' })
  @ApiContactParam()
  @ApiSegmentParam()
  @ApiOk('ContactSegmentAdded', 'Added (or in it already).')
  @ApiErrorResponses([401, 403, 404, 422, 429], {
    404: 'Segment not found',
    422: { name: 'invalid_parameter', message: 'The segment id must be a valid UUID.' },
  })
  @Post(':idOrEmail/segments/:segmentId')
  @HttpCode(200)
  addToSegment(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Param('segmentId') segmentId: string) {
    return this.memberships.addToSegment(p.teamId, idOrEmail, segmentId, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'removeContactFromSegment', summary: 'Remove a contact from a segment' })
  @ApiContactParam()
  @ApiSegmentParam()
  @ApiOk('ContactSegmentRemoved', 'Removed.')
  @ApiErrorResponses([401, 403, 404, 422, 429], {
    404: 'Segment not found',
    422: { name: 'invalid_parameter', message: 'The segment id must be a valid UUID.' },
  })
  @Delete(':idOrEmail/segments/:segmentId')
  removeFromSegment(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Param('segmentId') segmentId: string) {
    return this.memberships.removeFromSegment(p.teamId, idOrEmail, segmentId, p.team.homeRegion);
  }
}
