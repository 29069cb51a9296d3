import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { ContactPropertiesService, TopicsService } from '@herald/contacts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

/** /topics: the subscription preferences a team offers its contacts. */
@ApiExcludeController()
@UseGuards(ApiKeyGuard)
@Controller('topics')
export class TopicsController {
  constructor(private readonly topics: TopicsService) {}

  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.topics.create(p.teamId, body, p.team.homeRegion);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.topics.list(p.teamId, query);
  }

  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.topics.get(p.teamId, id);
  }

  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.topics.update(p.teamId, id, body, p.team.homeRegion);
  }

  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.topics.remove(p.teamId, id, p.team.homeRegion);
  }
}

/** /contact-properties: typed custom fields of contacts, with fallbacks. */
@ApiExcludeController()
@UseGuards(ApiKeyGuard)
@Controller('contact-properties')
export class ContactPropertiesController {
  constructor(private readonly properties: ContactPropertiesService) {}

  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.properties.create(p.teamId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.properties.list(p.teamId, query);
  }

  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.properties.get(p.teamId, id);
  }

  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.properties.update(p.teamId, id, body);
  }

  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.properties.remove(p.teamId, id);
  }
}
