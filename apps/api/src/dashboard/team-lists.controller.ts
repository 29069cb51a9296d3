import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { isHeraldError, isUuid } from '@herald/core';
import { isPlainObject } from '@herald/http';
import { SuppressionsService } from '@herald/suppressions';
import { WebhookEventsService, WebhooksService } from '@herald/webhooks';
import { DashboardController, Needs } from './dashboard.guard';

/** Webhooks: endpoints, their signing secret, and the delivery log with replay. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/webhooks')
export class TeamWebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly log: WebhookEventsService,
  ) {}

  @Get()
  list(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.webhooks.list(teamId, query);
  }

  @Post()
  @HttpCode(201)
  create(@Param('teamId') teamId: string, @Body() body: unknown) {
    return this.webhooks.create(teamId, body);
  }

  @Get(':id')
  get(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.webhooks.get(teamId, id);
  }

  @Patch(':id')
  update(@Param('teamId') teamId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.webhooks.update(teamId, id, body);
  }

  @Delete(':id')
  remove(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.webhooks.remove(teamId, id);
  }

  /** Revealing the secret is a write-level act: members, who may not change webhooks, do not see it. */
  @Get(':id/secret')
  @Needs('write')
  async secret(@Param('teamId') teamId: string, @Param('id') id: string) {
    return { secret: (await this.webhooks.find(teamId, id)).signingSecret };
  }

  @Post(':id/secret/rotate')
  @HttpCode(200)
  rotate(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.webhooks.rotateSigningSecret(teamId, id);
  }

  @Get(':id/messages')
  messages(@Param('teamId') teamId: string, @Param('id') id: string, @Query() query: unknown) {
    return this.log.list(teamId, id, query);
  }

  @Get(':id/messages/:messageId')
  message(@Param('teamId') teamId: string, @Param('id') id: string, @Param('messageId') messageId: string) {
    return this.log.get(teamId, id, messageId);
  }

  /** Each attempt's HTTP status and the first KiB of the response. */
  @Get(':id/messages/:messageId/attempts')
  attempts(@Param('teamId') teamId: string, @Param('id') id: string, @Param('messageId') messageId: string, @Query() query: unknown) {
    return this.log.attempts(teamId, id, messageId, query);
  }

  @Post(':id/messages/:messageId/replay')
  @HttpCode(200)
  replay(@Param('teamId') teamId: string, @Param('id') id: string, @Param('messageId') messageId: string) {
    return this.log.replay(teamId, id, messageId);
  }
}

/** The suppression list, keyset-paged: `q` narrows it to the addresses containing it (any case), or finds one entry by its id. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/suppressions')
export class TeamSuppressionsController {
  constructor(
    private readonly suppressions: SuppressionsService,
    private readonly teams: TeamsService,
  ) {}

  @Get()
  async list(@Param('teamId') teamId: string, @Query() query: unknown) {
    const q = isPlainObject(query) && typeof query['q'] === 'string' ? query['q'].trim() : '';
    if (!isUuid(q)) return this.suppressions.search(teamId, query);
    try {
      return { object: 'list', has_more: false, data: [await this.suppressions.get(teamId, q)] };
    } catch (error) {
      if (isHeraldError(error) && error.code === 'not_found') return { object: 'list', has_more: false, data: [] };
      throw error;
    }
  }

  @Post()
  @HttpCode(201)
  async add(@Param('teamId') teamId: string, @Body() body: unknown) {
    return this.suppressions.add(teamId, body, (await this.teams.get(teamId)).homeRegion);
  }

  @Delete(':id')
  async remove(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.suppressions.remove(teamId, id, (await this.teams.get(teamId)).homeRegion);
  }
}
