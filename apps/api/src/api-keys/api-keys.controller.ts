import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { ApiErrorResponses, ApiIdParam, ApiOk } from '../openapi/openapi.decorators';
import { schemaRef } from '../openapi/schemas';

@ApiTags('api-keys')
@UseGuards(ApiKeyGuard)
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @ApiOperation({ operationId: 'createApiKey', summary: 'Create an API key; the token is shown only in this response' })
  @ApiBody({ schema: schemaRef('CreateApiKeyRequest') })
  @ApiOk('CreateApiKeyResponse', 'The new key, with its token.')
  @ApiErrorResponses(401, 403, 422, 429)
  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    // The service validates every field; the cast only names the shape it expects.
    return presentCreatedApiKey(await this.apiKeys.create(p.teamId, (body ?? {}) as CreateApiKeyInput));
  }

  @ApiOperation({ operationId: 'listApiKeys', summary: 'List API keys' })
  @ApiOk('ApiKeyList', 'Every key of the team, newest first; `has_more` is always false.')
  @ApiErrorResponses(401, 403, 429)
  @Get()
  async list(@CurrentPrincipal() p: Principal) {
    return presentApiKeyList(await this.apiKeys.list(p.teamId));
  }

  @ApiOperation({ operationId: 'updateApiKey', summary: 'Rename an API key' })
  @ApiIdParam('API key')
  @ApiBody({ schema: schemaRef('UpdateApiKeyRequest') })
  @ApiOk('ApiKeyReference', 'Renamed.')
  @ApiErrorResponses(401, 403, 404, 422, 429)
  @Patch(':id')
  async rename(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    // The body's only field; its schema (updateApiKeyBody) is the one the service checks it with.
    await this.apiKeys.rename(p.teamId, id, isPlainObject(body) ? body['name'] : undefined);
    return presentApiKeyReference(id);
  }

  @ApiOperation({ operationId: 'deleteApiKey', summary: 'Delete an API key' })
  @ApiIdParam('API key')
  @ApiOk('DeletedApiKey', 'Deleted.')
  @ApiErrorResponses(401, 403, 404, 422, 429)
  @Delete(':id')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    await this.apiKeys.remove(p.teamId, id);
    return presentDeletedApiKey(id);
  }
}
