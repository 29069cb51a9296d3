import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ApiKeysService,
  CreateApiKeyInput,
  presentApiKeyList,
  presentApiKeyReference,
  presentCreatedApiKey,
  presentDeletedApiKey,
  Principal,
} from '@herald/accounts';
import { isPlainObject } from '@herald/http';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';
import { ApiErrorResponses, ApiIdParam, ApiJsonBody, ApiOk } from '../openapi/openapi.decorators';

const BY_ID = { 404: 'API key not found', 422: { name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' } } as const;

@ApiTags('api-keys')
@UseGuards(ApiKeyGuard)
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @ApiOperation({ operationId: 'createApiKey', summary: 'Create an API key; the token is shown only in this response' })
  @ApiJsonBody('CreateApiKeyRequest')
  @ApiOk('CreateApiKeyResponse', 'The new key, with its token.')
  @ApiErrorResponses([401, 403, 422, 429], { 422: { name: 'missing_required_field', message: 'Missing `name` field.' } })
  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    // The service validates every field; the cast only names the shape it expects.
    return presentCreatedApiKey(await this.apiKeys.create(p.teamId, (body ?? {}) as CreateApiKeyInput));
  }

  @ApiOperation({ operationId: 'listApiKeys', summary: 'List API keys' })
  @ApiOk('ApiKeyList', 'Every key of the team, newest first; `has_more` is always false.')
  @ApiErrorResponses([401, 403, 429])
  @Get()
  async list(@CurrentPrincipal() p: Principal) {
    return presentApiKeyList(await this.apiKeys.list(p.teamId));
  }

  @ApiOperation({ operationId: 'updateApiKey', summary: 'Rename an API key' })
  @ApiIdParam('API key')
  @ApiJsonBody('UpdateApiKeyRequest')
  @ApiOk('ApiKeyReference', 'Renamed.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Patch(':id')
  async rename(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    // The body's only field; its schema (updateApiKeyBody) is the one the service checks it with.
    await this.apiKeys.rename(p.teamId, id, isPlainObject(body) ? body['name'] : undefined);
    return presentApiKeyReference(id);
  }

  @ApiOperation({ operationId: 'deleteApiKey', summary: 'Delete an API key' })
  @ApiIdParam('API key')
  @ApiOk('DeletedApiKey', 'Deleted.')
  @ApiErrorResponses([401, 403, 404, 422, 429], BY_ID)
  @Delete(':id')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    await this.apiKeys.remove(p.teamId, id);
    return presentDeletedApiKey(id);
  }
}
