import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiErrorResponses, ApiIdParam, ApiJsonBody, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';
import type { Principal } from '@herald/accounts';
import { ContactPropertiesService, TopicsService } from '@herald/contacts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

const TOPIC_BY_ID = { 404: 'Topic not found', 422: { name: 'invalid_parameter', message: 'The topic id must be a valid UUID.' } } as const;
const PROPERTY_BY_ID = {
  404: 'Contact property not found',
  422: { name: 'invalid_parameter', message: 'The contact property id must be a valid UUID.' },
} as const;

/** /topics: the subscription preferences a team offers its contacts. */
@ApiTags('topics')
@UseGuards(ApiKeyGuard)
@Controller('topics')
export class TopicsController {
  constructor(private readonly topics: TopicsService) {}

  @ApiOperation({ operationId: 'createTopic', summary: 'Create a topic (its default subscription cannot change)' })
  @ApiJsonBody('CreateTopicRequest')
  @ApiOk('TopicReference', 'The new topic.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'The `name` field is required.' } })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.topics.create(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'listTopics', summary: 'List topics, newest first (100 without a limit)' })
  @ApiPageQuery('topic')
  @ApiOk('TopicList', 'The topics, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.topics.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getTopic', summary: 'Retrieve a topic' })
  @ApiIdParam('topic')
  @ApiOk('Topic', 'The topic.')
  @ApiErrorResponses([401, 403, 404, 422, 429], TOPIC_BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.topics.get(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateTopic', summary: "Change a topic's name, description or visibility" })
  @ApiIdParam('topic')
  @ApiJsonBody('UpdateTopicRequest')
  @ApiOk('TopicReference', 'Updated.')
  @ApiErrorResponses([401, 403, 404, 422, 429], TOPIC_BY_ID)
  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.topics.update(p.teamId, id, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'deleteTopic', summary: "Delete a topic and the contacts' choices about it" })
  @ApiIdParam('topic')
  @ApiOk('DeletedTopic', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], TOPIC_BY_ID)
  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.topics.remove(p.teamId, id, p.team.homeRegion);
  }
}

/** /contact-properties: typed custom fields of contacts, with fallbacks. */
@ApiTags('contact-properties')
@UseGuards(ApiKeyGuard)
@Controller('contact-properties')
export class ContactPropertiesController {
  constructor(private readonly properties: ContactPropertiesService) {}

  @ApiOperation({ operationId: 'createContactProperty', summary: 'Create a contact property (string or number, with a fallback)' })
  @ApiJsonBody('CreateContactPropertyRequest')
  @ApiOk('ContactPropertyReference', 'The new property.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'The `key` field is required.' } })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.properties.create(p.teamId, body);
  }

  @ApiOperation({ operationId: 'listContactProperties', summary: 'List contact properties, newest first' })
  @ApiPageQuery('property')
  @ApiOk('ContactPropertyList', 'The properties, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.properties.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getContactProperty', summary: 'Retrieve a contact property' })
  @ApiIdParam('contact property')
  @ApiOk('ContactProperty', 'The property.')
  @ApiErrorResponses([401, 403, 404, 422, 429], PROPERTY_BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.properties.get(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateContactProperty', summary: "Change a contact property's fallback value" })
  @ApiIdParam('contact property')
  @ApiJsonBody('UpdateContactPropertyRequest')
  @ApiOk('ContactPropertyReference', 'Updated.')
  @ApiErrorResponses([401, 403, 404, 422, 429], PROPERTY_BY_ID)
  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.properties.update(p.teamId, id, body);
  }

  @ApiOperation({ operationId: 'deleteContactProperty', summary: "Delete a contact property and the contacts' values of it" })
  @ApiIdParam('contact property')
  @ApiOk('DeletedContactProperty', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], PROPERTY_BY_ID)
  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.properties.remove(p.teamId, id);
  }
}
