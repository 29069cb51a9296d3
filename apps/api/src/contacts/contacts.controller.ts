import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Principal } from '@herald/accounts';
import { ContactImportsService, ContactMembershipsService, ContactsService } from '@herald/contacts';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { CurrentPrincipal } from '../auth/principal';

/**
 * /contacts (API.md §11): a contact is named by its id or its address, raw in the path. The
 * literal `imports` routes win over `:idOrEmail` (the router prefers static segments; an
 * address always has an `@`). Full-access keys only: ApiKeyGuard refuses sending_access keys.
 */
@ApiExcludeController()
@UseGuards(ApiKeyGuard)
@Controller('contacts')
export class ContactsController {
  constructor(
    private readonly contacts: ContactsService,
    private readonly memberships: ContactMembershipsService,
    private readonly imports: ContactImportsService,
  ) {}

  @Post('imports')
  @HttpCode(200)
  importContacts(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.imports.create(p.teamId, body);
  }

  @Get('imports')
  listImports(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.imports.list(p.teamId, query);
  }

  @Get('imports/:id')
  getImport(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.imports.get(p.teamId, id);
  }

  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.contacts.create(p.teamId, body, p.team.homeRegion);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: unknown) {
    return this.contacts.list(p.teamId, query);
  }

  @Get(':idOrEmail')
  get(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.get(p.teamId, idOrEmail);
  }

  @Patch(':idOrEmail')
  update(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Body() body: unknown) {
    return this.contacts.update(p.teamId, idOrEmail, body, p.team.homeRegion);
  }

  @Delete(':idOrEmail')
  remove(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string) {
    return this.contacts.remove(p.teamId, idOrEmail, p.team.homeRegion);
  }

  @Get(':idOrEmail/topics')
  topics(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Query() query: unknown) {
    return this.memberships.listTopics(p.teamId, idOrEmail, query);
  }

  @Patch(':idOrEmail/topics')
  updateTopics(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Body() body: unknown) {
    return this.memberships.updateTopics(p.teamId, idOrEmail, body, p.team.homeRegion);
  }

  @Get(':idOrEmail/segments')
  segments(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Query() query: unknown) {
    return this.memberships.listSegments(p.teamId, idOrEmail, query);
  }

  @Post(':idOrEmail/segments/:segmentId')
  @HttpCode(200)
  addToSegment(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Param('segmentId') segmentId: string) {
    return this.memberships.addToSegment(p.teamId, idOrEmail, segmentId, p.team.homeRegion);
  }

  @Delete(':idOrEmail/segments/:segmentId')
  removeFromSegment(@CurrentPrincipal() p: Principal, @Param('idOrEmail') idOrEmail: string, @Param('segmentId') segmentId: string) {
    return this.memberships.removeFromSegment(p.teamId, idOrEmail, segmentId, p.team.homeRegion);
  }
}
