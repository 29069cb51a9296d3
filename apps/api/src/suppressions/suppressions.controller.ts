import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { SuppressionsService } from '@herald/suppressions';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses, ApiIdOrEmailParam, ApiJsonBody, ApiOk, ApiSuppressionPageQuery } from '../openapi/openapi.decorators';

const BY_ID_OR_EMAIL = {
  404: 'Suppression not found',
  422: { name: 'invalid_parameter', message: 'The suppression must be given by its id (a UUID) or its email address.' },
} as const;
const missing = (message: string) => ({ 422: { name: 'missing_required_field', message } }) as const;

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
  @ApiJsonBody('AddSuppressionsRequest')
  @ApiOk('AddedSuppressions', 'The entries, in the order of `emails` (duplicates once).')
  @ApiErrorResponses([401, 403, 422, 429], missing('The `emails` field is required.'))
  @Post('batch/add')
  @HttpCode(200)
  addMany(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.suppressions.addMany(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'removeSuppressions', summary: 'Remove up to 100 entries, by email or by id' })
  @ApiJsonBody('RemoveSuppressionsRequest')
  @ApiOk('RemovedSuppressions', 'The entries removed; addresses or ids not listed are left out.')
  @ApiErrorResponses([401, 403, 422, 429], missing('Either the `emails` or the `ids` field is required.'))
  @Post('batch/remove')
  @HttpCode(200)
  removeMany(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.suppressions.removeMany(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'addSuppression', summary: 'Suppress an address (answers the existing entry if it is listed)' })
  @ApiJsonBody('AddSuppressionRequest')
  @ApiOk('Suppression', 'The entry.')
  @ApiErrorResponses([401, 403, 422, 429], missing('The `email` field is required.'))
  @Post()
  @HttpCode(200)
  add(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.suppressions.add(p.teamId, body, p.team.homeRegion);
  }

  @ApiOperation({ operationId: 'listSuppressions', summary: 'List suppressed addresses, newest first' })
  @ApiSuppressionPageQuery()
  @ApiOk('SuppressionList', 'The entries, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.suppressions.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getSuppression', summary: 'Retrieve an entry by id or email' })
  @ApiIdOrEmailParam()
  @ApiOk('Suppression', 'The entry.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Get(':idOrEmail')
  get(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.suppressions.get(p.teamId, idOrEmail);
  }

  @ApiOperation({ operationId: 'removeSuppression', summary: 'Remove an entry by id or email' })
  @ApiIdOrEmailParam()
  @ApiOk('DeletedSuppression', 'Removed.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID_OR_EMAIL)
  @Delete(':idOrEmail')
  remove(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.suppressions.remove(p.teamId, idOrEmail, p.team.homeRegion);
  }
}
