import { Controller, Get, Param, Query } from '@nestjs/common';
import { StatsService } from '@herald/metrics';
import { DashboardController } from './dashboard.guard';

/** The Metrics page: GET /stats of the team, same query and shape. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/stats')
export class TeamStatsController {
  constructor(private readonly stats: StatsService) {}

  @Get()
  get(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.stats.stats(teamId, query);
  }
}
