import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { StatsService } from '@herald/metrics';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses, ApiOk, ApiStatsQuery } from '../openapi/openapi.decorators';

/** The team's sending metrics. Full-access keys only: ApiKeyGuard refuses sending_access keys here. */
@ApiTags('stats')
@UseGuards(ApiKeyGuard)
@Controller('stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @ApiOperation({
    operationId: 'getStats',
    summary: "The team's sending metrics over time (Herald extension)",
    description:
      'Counts of recipients per hour or per day, from every event of the team: sent, delivered, delayed, bounced (hard ' +
      'and soft), complained, suppressed, failed, and opens and clicks (people and machines apart, with unique counts). ' +
      'Buckets are UTC and every bucket of the range is listed. `totals` adds the delivery, bounce and complaint rates.',
  })
  @ApiStatsQuery()
  @ApiOk('Stats', 'The buckets of the range and their totals.')
  @ApiErrorResponses([401, 403, 404, 422, 429], {
    404: 'Domain not found',
    422: { name: 'validation_error', message: 'The `granularity` field must be `hour` or `day`.' },
  })
  @Get()
  get(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.stats.stats(p.teamId, query);
  }
}
