import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeysService, CreateApiKeyInput, Principal } from '@herald/accounts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

@ApiTags('api-keys')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @ApiOperation({ summary: 'Create an API key; the token is shown only in this response' })
  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    // The service validates every field; the cast only names the shape it expects.
    const { id, token } = await this.apiKeys.create(p.teamId, (body ?? {}) as CreateApiKeyInput);
    return { id, object: 'api_key', token };
  }

  @ApiOperation({ summary: 'List API keys' })
  @Get()
  async list(@CurrentPrincipal() p: Principal) {
    return { object: 'list', has_more: false, data: await this.apiKeys.list(p.teamId) };
  }

  @ApiOperation({ summary: 'Rename an API key' })
  @Patch(':id')
  async rename(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    await this.apiKeys.rename(p.teamId, id, (body as { name?: string } | undefined)?.name as string);
    return { object: 'api_key', id };
  }

  @ApiOperation({ summary: 'Delete an API key' })
  @Delete(':id')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    await this.apiKeys.remove(p.teamId, id);
    return { object: 'api_key', id, deleted: true };
  }
}
