import { Controller, Get, Param, Query } from '@nestjs/common';
import { ContactPropertiesService, SegmentsService, TopicsService } from '@herald/contacts';
import { DashboardController } from './dashboard.guard';

/**
 * What the Broadcasts page picks from: the team's segments and topics, and the contact properties
 * its merge-tag menu offers. Read-only lists, the REST API's shapes; the Contacts page manages them.
 */
@DashboardController()
@Controller('dashboard/api/teams/:teamId')
export class TeamAudienceController {
  constructor(
    private readonly segments: SegmentsService,
    private readonly topics: TopicsService,
    private readonly properties: ContactPropertiesService,
  ) {}

  @Get('segments')
  listSegments(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.segments.list(teamId, query);
  }

  @Get('topics')
  listTopics(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.topics.list(teamId, query);
  }

  @Get('contact-properties')
  listProperties(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.properties.list(teamId, query);
  }
}
