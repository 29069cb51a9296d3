import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { ContactImportsService, ContactMembershipsService, ContactsService, SegmentsService } from '@herald/contacts';
import { DashboardController } from './dashboard.guard';

/**
 * The Contacts page: the list (`q` searches addresses, `segment_id` narrows to a segment), a
 * contact with its segments and topics, and CSV imports with their report of rejected rows.
 */
@DashboardController()
@Controller('dashboard/api/teams/:teamId')
export class TeamContactsController {
  constructor(
    private readonly contacts: ContactsService,
    private readonly memberships: ContactMembershipsService,
    private readonly segments: SegmentsService,
    private readonly imports: ContactImportsService,
    private readonly teams: TeamsService,
  ) {}

  @Get('contacts')
  list(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.contacts.search(teamId, query);
  }

  /** The contact, its segments and every topic with its subscription. */
  @Get('contacts/:id')
  async get(@Param('teamId') teamId: string, @Param('id') id: string) {
    const [contact, segments, topics] = await Promise.all([
      this.contacts.get(teamId, id),
      this.memberships.listSegments(teamId, id, { limit: '100' }),
      this.memberships.listTopics(teamId, id, { limit: '100' }),
    ]);
    return { contact, segments: segments.data, topics: topics.data };
  }

  @Delete('contacts/:id')
  async remove(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.contacts.remove(teamId, id, (await this.teams.get(teamId)).homeRegion);
  }

  @Get('segments')
  segmentList(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.segments.list(teamId, query);
  }

  /** A CSV upload (multipart/form-data, the API's form): answers the import, queued (the page polls it for its progress and report). */
  @Post('contact-imports')
  @HttpCode(202)
  async importContacts(@Param('teamId') teamId: string, @Body() body: unknown) {
    const { id } = await this.imports.create(teamId, body);
    return this.imports.get(teamId, id);
  }

  @Get('contact-imports')
  importList(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.imports.list(teamId, query);
  }

  @Get('contact-imports/:id')
  importReport(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.imports.get(teamId, id);
  }
}
