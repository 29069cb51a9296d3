import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { BroadcastsService } from '@herald/broadcasts';
import { DashboardController } from './dashboard.guard';

/**
 * The Broadcasts page (the editor's): the REST API's service and validation, answering the whole
 * broadcast after each change so the page needs no second read, plus a test send and a preview.
 */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/broadcasts')
export class TeamBroadcastsController {
  constructor(private readonly broadcasts: BroadcastsService) {}

  @Get()
  list(@Param('teamId') teamId: string, @Query() query: unknown) {
    return this.broadcasts.list(teamId, query);
  }

  @Post()
  @HttpCode(201)
  async create(@Param('teamId') teamId: string, @Body() body: unknown) {
    return this.broadcasts.get(teamId, (await this.broadcasts.create(teamId, body)).id);
  }

  /** `{document}` or `{html, text}` as the broadcast would send them, merge tags left in. */
  @Post('preview')
  @HttpCode(200)
  preview(@Body() body: unknown) {
    return this.broadcasts.preview(body);
  }

  @Get(':id')
  get(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.broadcasts.get(teamId, id);
  }

  @Patch(':id')
  async update(@Param('teamId') teamId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.broadcasts.get(teamId, (await this.broadcasts.update(teamId, id, body)).id);
  }

  @Post(':id/test')
  @HttpCode(200)
  test(@Param('teamId') teamId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.broadcasts.sendTest(teamId, id, body);
  }

  @Post(':id/send')
  @HttpCode(200)
  async send(@Param('teamId') teamId: string, @Param('id') id: string, @Body() body: unknown) {
    return this.broadcasts.get(teamId, (await this.broadcasts.send(teamId, id, body)).id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  async cancel(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.broadcasts.get(teamId, (await this.broadcasts.cancel(teamId, id)).id);
  }

  @Delete(':id')
  async remove(@Param('teamId') teamId: string, @Param('id') id: string) {
    const { id: removed } = await this.broadcasts.remove(teamId, id);
    return { id: removed, deleted: true };
  }
}
