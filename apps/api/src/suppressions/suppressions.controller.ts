import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { SuppressionsService } from '@herald/suppressions';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses } from '../openapi/openapi.decorators';
import {
  ApiAddSuppressionBody,
  ApiBatchAddSuppressionsBody,
  ApiBatchAddSuppressionsOk,
  ApiBatchRemoveSuppressionsBody,
  ApiBatchRemoveSuppressionsOk,
  ApiDeletedSuppressionOk,
  ApiIdOrEmailParam,
  ApiSuppressionListOk,
  ApiSuppressionOk,
  ApiSuppressionPageQuery,
} from '../openapi/suppressions.schemas';

/**
 * The team's suppression list. Full-access keys only: ApiKeyGuard refuses sending_access keys
 * here. The literal `batch/…` routes are declared before `:idOrEmail` (and are POSTs, which the
 * parameter route is not), so they always win.
 */
@ApiTags('suppressions')
@UseGuards(ApiKeyGuard)
@Controller('suppressions')
export class SuppressionsController {
  constructor(private readonly suppressions: SuppressionsService) {}

  @ApiOperation({ operationId: 'addSuppressions', summary: 'Suppress up to 100 addresses' })
  @ApiBatchAddSuppressionsBody()
  @ApiBatchAddSuppressionsOk()
  @ApiErrorResponses(401, 403, 422, 429)
  @Post('batch/add')
  @HttpCode(200)
  addMany(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.suppressions.addMany(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'removeSuppressions', summary: 'Remove up to 100 entries, by email or by id' })
  @ApiBatchRemoveSuppressionsBody()
  @ApiBatchRemoveSuppressionsOk()
  @ApiErrorResponses(401, 403, 422, 429)
  @Post('batch/remove')
  @HttpCode(200)
  removeMany(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.suppressions.removeMany(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'addSuppression', summary: 'Suppress an address (answers the existing entry if it is listed)' })
  @ApiAddSuppressionBody()
  @ApiSuppressionOk('The entry.')
  @ApiErrorResponses(401, 403, 422, 429)
  @Post()
  @HttpCode(200)
  add(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.suppressions.add(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'listSuppressions', summary: 'List suppressed addresses, newest first' })
  @ApiSuppressionPageQuery()
  @ApiSuppressionListOk()
  @ApiErrorResponses(401, 403, 422, 429)
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.suppressions.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getSuppression', summary: 'Retrieve an entry by id or email' })
  @ApiIdOrEmailParam()
  @ApiSuppressionOk('The entry.')
  @ApiErrorResponses(401, 403, 404, 422, 429)
  @Get(':idOrEmail')
  get(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.suppressions.get(p.teamId, idOrEmail);
  }

  @ApiOperation({ operationId: 'removeSuppression', summary: 'Remove an entry by id or email' })
  @ApiIdOrEmailParam()
  @ApiDeletedSuppressionOk()
  @ApiErrorResponses(401, 403, 404, 422, 429)
  @Delete(':idOrEmail')
  remove(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.suppressions.remove(p.teamId, idOrEmail, p.team.homeRegion);
  }
}
