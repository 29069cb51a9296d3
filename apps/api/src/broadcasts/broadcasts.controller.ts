import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { broadcastRef, BroadcastsService } from '@herald/broadcasts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

/**
 * Broadcasts (API.md §11), Resend's paths and shapes. Full-access keys only, as at Resend: a
 * sending_access key may call the two send endpoints alone, so ApiKeyGuard answers it 401
 * `restricted_api_key` here. Not in /openapi.json yet (their schemas are still to be written).
 */
@ApiExcludeController()
@UseGuards(ApiKeyGuard)
@Controller('broadcasts')
export class BroadcastsController {
  constructor(private readonly broadcasts: BroadcastsService) {}

  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return broadcastRef((await this.broadcasts.create(p.teamId, body)).id);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.broadcasts.list(p.teamId, query);
  }

  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.broadcasts.get(p.teamId, id);
  }

  @Patch(':id')
  async update(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return broadcastRef((await this.broadcasts.update(p.teamId, id, body)).id);
  }

  @Post(':id/send')
  @HttpCode(200)
  async send(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return broadcastRef((await this.broadcasts.send(p.teamId, id, body)).id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  async cancel(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return broadcastRef((await this.broadcasts.cancel(p.teamId, id)).id);
  }

  @Post(':id/duplicate')
  @HttpCode(200)
  async duplicate(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return broadcastRef((await this.broadcasts.duplicate(p.teamId, id)).id);
  }

  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.broadcasts.remove(p.teamId, id);
  }
}
