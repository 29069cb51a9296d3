import { Controller, Get, Param, Query } from '@nestjs/common';
import { ContactPropertiesService, TopicsService } from '@herald/contacts';
import { DashboardController } from './dashboard.guard';

/**
 * What the Broadcasts page picks from besides segments (TeamContactsController lists those): the
 * team's topics and the contact properties its merge-tag menu offers. Read-only, the REST API's shapes.
 */
@DashboardController()
@Controller('dashboard/api/teams/:teamId')
export class TeamAudienceController {
  constructor(
    private readonly topics: TopicsService,
    private readonly properties: ContactPropertiesService,
  ) {}

  @Get('topics')
  listTopics(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.topics.list(teamId, query);
  }

  @Get('contact-properties')
  listProperties(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.properties.list(teamId, query);
  }
}
