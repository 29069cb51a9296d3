import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { ContactsService, SegmentsService } from '@herald/contacts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

/** /segments, and a segment's contacts (GET /segments/:id/contacts, which the SDK's contacts.list({segmentId}) calls). */
@ApiExcludeController()
@UseGuards(ApiKeyGuard)
@Controller('segments')
export class SegmentsController {
  constructor(
    private readonly segments: SegmentsService,
    private readonly contacts: ContactsService,
  ) {}

  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.segments.create(p.teamId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.segments.list(p.teamId, query);
  }

  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.segments.get(p.teamId, id);
  }

  @Patch(':id')
  rename(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.segments.rename(p.teamId, id, body);
  }

  @Delete(':id')
  remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.segments.remove(p.teamId, id);
  }

  @Get(':id/contacts')
  async members(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.contacts.list(p.teamId, query, await this.segments.existing(p.teamId, id));
  }
}

/**
 * The older SDKs' /audiences paths: an audience is a segment, and /audiences/:id/contacts[/:idOrEmail]
 * are that segment's contacts (a contact created there joins the segment; one outside it is not found there).
 */
@ApiExcludeController()
@UseGuards(ApiKeyGuard)
@Controller('audiences')
export class AudiencesController {
  constructor(
    private readonly segments: SegmentsService,
    private readonly contacts: ContactsService,
  ) {}

  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const segment = await this.segments.create(p.teamId, body);
    return { ...segment, object: 'audience' };
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.segments.list(p.teamId, query);
  }

  @Get(':id')
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return { ...(await this.segments.get(p.teamId, id)), object: 'audience' };
  }

  @Delete(':id')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return { ...(await this.segments.remove(p.teamId, id)), object: 'audience' };
  }

  @Post(':id/contacts')
  @HttpCode(200)
  async createContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.contacts.create(p.teamId, body, p.team.homeRegion, await this.segments.existing(p.teamId, id));
  }

  @Get(':id/contacts')
  async listContacts(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: unknown) {
    return this.contacts.list(p.teamId, query, await this.segments.existing(p.teamId, id));
  }

  @Get(':id/contacts/:idOrEmail')
  async getContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.get(p.teamId, idOrEmail, await this.segments.existing(p.teamId, id));
  }

  @Patch(':id/contacts/:idOrEmail')
  async updateContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('idOrEmail') idOrEmail: string, @Body() body: unknown) {
    return this.contacts.update(p.teamId, idOrEmail, body, p.team.homeRegion, await this.segments.existing(p.teamId, id));
  }

  @Delete(':id/contacts/:idOrEmail')
  async removeContact(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.remove(p.teamId, idOrEmail, p.team.homeRegion, await this.segments.existing(p.teamId, id));
  }
}
