import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { HeraldError } from '@herald/core';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { DashboardController, Needs } from './dashboard.guard';

/** The Domains page, through the REST API's service and shapes. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/domains')
export class TeamDomainsController {
  constructor(
    private readonly domains: DomainsService,
    private readonly rows: DomainsRepository,
    private readonly teams: TeamsService,
  ) {}

  @Get()
  list(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.domains.list(teamId, query);
  }

  @Post()
  @HttpCode(201)
  async create(@Param('teamId') teamId: string, @Body() body: unknown) {
    const team = await this.teams.get(teamId);
    return this.domains.create({ teamId, homeRegion: team.homeRegion }, body);
  }

  /** The REST shape, each record also with what DNS answered at the last check (`observed`) and why it did not verify (`reason`). */
  @Get(':id')
  async get(@Param('teamId') teamId: string, @Param('id') id: string) {
    const body = await this.domains.get(teamId, id);
    const stored = await this.rows.get(teamId, body.id);
    if (!stored) throw new HeraldError('not_found', 'Domain not found');
    return {
      ...body,
      records: body.records.map((record, i) => ({
        ...record,
        observed: stored.records[i]?.observed ?? [],
        reason: stored.records[i]?.problem ?? null,
      })),
    };
  }

  @Post(':id/verify')
  @HttpCode(200)
  verify(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.domains.verify(teamId, id);
  }

  @Post(':id/resume')
  @HttpCode(200)
  @Needs('resume_domain')
  resume(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.domains.resume(teamId, id);
  }

  @Post(':id/dkim/rotate')
  @HttpCode(200)
  rotate(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.domains.rotateDkimKey(teamId, id);
  }

  @Delete(':id')
  remove(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.domains.remove(teamId, id);
  }
}
