import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiKeysService, type CreateApiKeyInput } from '@herald/accounts';
import { isPlainObject } from '@herald/http';
import { type Actor, PeopleService } from '@herald/people';
import { CurrentActor, DashboardController } from './dashboard.guard';

/** API keys: created with a permission and an optional domain, the token shown once; every creation and revocation audited. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/api-keys')
export class TeamKeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly people: PeopleService,
  ) {}

  @Get()
  async list(@Param('teamId') teamId: string) {
    return { object: 'list', has_more: false, data: await this.keys.listWithScope(teamId) };
  }

  @Post()
  @HttpCode(201)
  async create(@Param('teamId') teamId: string, @CurrentActor() actor: Actor, @Body() body: unknown) {
    // The service validates every field (createApiKeyBody); the cast only names the shape.
    const created = await this.keys.create(teamId, (body ?? {}) as CreateApiKeyInput);
    const input = isPlainObject(body) ? body : {};
    await this.people.record(actor, teamId, 'api_key.created', {
      api_key_id: created.id,
      name: input['name'],
      permission: input['permission'] ?? 'full_access',
    });
    return created;
  }

  @Delete(':id')
  async remove(@Param('teamId') teamId: string, @CurrentActor() actor: Actor, @Param('id') id: string) {
    await this.keys.remove(teamId, id);
    await this.people.record(actor, teamId, 'api_key.revoked', { api_key_id: id });
    return { object: 'api_key', id, deleted: true };
  }
}
