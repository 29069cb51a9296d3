import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { ContactImportsService } from '@herald/contacts';
import { PAGE_LIMIT_MESSAGE } from '@herald/http';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiAccepted, ApiErrorResponses, ApiIdParam, ApiOk, ApiPageQuery } from '../openapi/openapi.decorators';
import { schemaRef } from '../openapi/schemas';

/**
 * /contacts/imports (API.md §11): CSV imports of contacts, a multipart form (the SDK sends the
 * file as FormData; installMultipartParser reads it). The upload answers 202 once the file is
 * stored; the rows are written in the background (GET /contacts/imports/:id for the progress).
 */
@ApiTags('contacts')
@UseGuards(ApiKeyGuard)
@Controller('contacts/imports')
export class ContactImportsController {
  constructor(private readonly imports: ContactImportsService) {}

  @ApiOperation({ operationId: 'importContacts', summary: 'Import contacts from a CSV file, with a report of the rows refused' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: schemaRef('ImportContactsRequest') })
  @ApiAccepted(
    'ContactImportReference',
    'The import, queued: its rows are written in the background (progress and report: GET /contacts/imports/{id}).',
  )
  @ApiErrorResponses([401, 403, 422, 429], {
    422: { name: 'validation_error', message: 'The request must be multipart/form-data with a `file` field (the CSV).' },
  })
  @Post()
  @HttpCode(202)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.imports.create(p.teamId, body);
  }

  @ApiOperation({ operationId: 'listContactImports', summary: 'List imports, newest first' })
  @ApiQuery({
    name: 'status',
    required: false,
    description: 'Only imports in this state.',
    schema: { type: 'string', enum: ['queued', 'in_progress', 'completed', 'failed'] },
  })
  @ApiPageQuery('import')
  @ApiOk('ContactImportList', 'The imports, newest first.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: PAGE_LIMIT_MESSAGE })
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.imports.list(p.teamId, query);
  }

  @ApiOperation({ operationId: 'getContactImport', summary: 'Retrieve an import, with its counts and the rows it refused' })
  @ApiIdParam('contact import')
  @ApiOk('ContactImport', 'The import.')
  @ApiErrorResponses([401, 403, 404, 422, 429], {
    404: 'Contact import not found',
    422: { name: 'invalid_parameter', message: 'The contact import id must be a valid UUID.' },
  })
  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.imports.get(p.teamId, id);
  }
}
