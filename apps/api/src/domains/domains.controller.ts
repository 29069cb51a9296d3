import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { DomainsService } from '@herald/domains';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses, ApiIdParam, ApiJsonBody, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';

const BY_ID = { 404: 'Domain not found', 422: { name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' } } as const;

/** Sending domains. Full-access keys only: ApiKeyGuard refuses sending_access keys here. */
@ApiTags('domains')
@UseGuards(ApiKeyGuard)
@Controller('domains')
export class DomainsController {
  constructor(private readonly domains: DomainsService) {}

  @ApiOperation({ operationId: 'createDomain', summary: 'Add a sending domain; the answer lists the DNS records to publish' })
  @ApiJsonBody('CreateDomainRequest')
  @ApiOk('CreateDomainResponse', 'The new domain and its DNS records.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'Missing `name` field.' } })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.domains.create({ teamId: p.teamId, homeRegion: p.team.homeRegion }, body);
  }

  @ApiOperation({ operationId: 'listDomains', summary: 'List domains, newest first' })
  @ApiPageQuery('domain', { limitOptional: true })
  @ApiOk('DomainList', 'The domains, without their records.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.domains.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getDomain', summary: 'Retrieve a domain with its DNS records and their status' })
  @ApiIdParam('domain')
  @ApiOk('Domain', 'The domain.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.domains.get(p.teamId, id);
  }

  @ApiOperation({ operationId: 'updateDomain', summary: 'Change tracking and TLS settings' })
  @ApiIdParam('domain')
  @ApiJsonBody('UpdateDomainRequest')
  @ApiOk('DomainReference', 'Updated.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Patch(':id')
  update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.domains.update(p.teamId, id, body);
  }

  @ApiOperation({ operationId: 'deleteDomain', summary: 'Delete a domain' })
  @ApiIdParam('domain')
  @ApiOk('DeletedDomain', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.domains.remove(p.teamId, id);
  }

  @ApiOperation({ operationId: 'verifyDomain', summary: 'Check the DNS records of a domain now' })
  @ApiIdParam('domain')
  @ApiOk('DomainReference', 'The check is queued; the domain is `pending` until it is done.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Post(':id/verify')
  @HttpCode(200)
  verify(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.domains.verify(p.teamId, id);
  }

  @ApiOperation({
    operationId: 'resumeDomain',
    summary: 'Resume a domain paused by the reputation guardrail (Herald extension)',
    description:
      'Herald pauses new sends from a domain whose bounce rate over the last 24 hours passes 4% or whose complaint rate ' +
      'passes 0.3% (`paused` on the domain says which, and sends are refused with 403 `domain_paused`). Resuming lifts ' +
      'the pause at once; the guardrail then judges the domain only on what it sends after the resume. A domain that is ' +
      'not paused is answered as it is.',
  })
  @ApiIdParam('domain')
  @ApiOk('Domain', 'The domain, `paused` now null.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Post(':id/resume')
  @HttpCode(200)
  resume(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.domains.resume(p.teamId, id);
  }

  @ApiOperation({
    operationId: 'rotateDomainDkimKey',
    summary: 'Rotate the DKIM keys of a domain (Herald extension)',
    description:
      'Adds a new DKIM key, with a new selector, for each algorithm the domain signs with. Its record appears in ' +
      '`records` with status `not_started`: publish it and verify the domain. Mail is signed with the current key ' +
      'until the new record verifies; the old record can be removed once it is no longer listed. Only one rotation ' +
      'at a time.',
  })
  @ApiIdParam('domain')
  @ApiOk('Domain', 'The domain, with the new DKIM record among its records.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Post(':id/dkim/rotate')
  @HttpCode(200)
  rotate(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.domains.rotateDkimKey(p.teamId, id);
  }
}
