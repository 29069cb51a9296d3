import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { restTimestamp } from '@herald/core';
import { isPlanId, QuotaService } from '@herald/limits';
import { type Actor, DashboardAuth, type Member, PeopleService, type Role } from '@herald/people';
import { parseAuditPage, presentAuditPage } from './audit-log.page';
import { CurrentActor, DashboardController, Needs, TeamRole } from './dashboard.guard';

const presentMember = (m: Member) => ({ user_id: m.userId, email: m.email, name: m.name, role: m.role, joined_at: restTimestamp(m.joinedAt) });

/** The Team page: members and their roles, invitations, usage against the plan, the audit log. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId')
export class TeamPeopleController {
  constructor(
    private readonly people: PeopleService,
    private readonly auth: DashboardAuth,
    private readonly teams: TeamsService,
    private readonly quota: QuotaService,
  ) {}

  @Get('members')
  async members(@Param('teamId') teamId: string) {
    return { data: (await this.people.listMembers(teamId)).map(presentMember) };
  }

  @Patch('members/:userId')
  @Needs('manage_members')
  async changeRole(
    @Param('teamId') teamId: string,
    @CurrentActor() actor: Actor,
    @TeamRole() role: Role,
    @Param('userId') userId: string,
    @Body() body: unknown,
  ) {
    return presentMember(await this.people.changeRole(teamId, actor, role, userId, body));
  }

  @Delete('members/:userId')
  @Needs('manage_members')
  async removeMember(@Param('teamId') teamId: string, @CurrentActor() actor: Actor, @TeamRole() role: Role, @Param('userId') userId: string) {
    await this.people.removeMember(teamId, actor, role, userId);
    return { user_id: userId, deleted: true };
  }

  @Get('invitations')
  async invitations(@Param('teamId') teamId: string) {
    return {
      data: (await this.people.listInvitations(teamId)).map((i) => ({
        id: i.id,
        email: i.email,
        role: i.role,
        expires_at: restTimestamp(i.expiresAt),
        created_at: restTimestamp(i.createdAt),
      })),
    };
  }

  @Post('invitations')
  @HttpCode(201)
  @Needs('manage_members')
  async invite(@Param('teamId') teamId: string, @CurrentActor() actor: Actor, @Body() body: unknown) {
    const i = await this.people.invite(teamId, actor, body, this.auth.dashboardUrl);
    return { id: i.id, email: i.email, role: i.role, expires_at: restTimestamp(i.expiresAt), created_at: restTimestamp(i.createdAt) };
  }

  @Delete('invitations/:id')
  @Needs('manage_members')
  async revoke(@Param('teamId') teamId: string, @CurrentActor() actor: Actor, @Param('id') id: string) {
    await this.people.revokeInvitation(teamId, actor, id);
    return { id, deleted: true };
  }

  @Get('usage')
  async usage(@Param('teamId') teamId: string) {
    const team = await this.teams.get(teamId);
    const plan = isPlanId(team.plan) ? team.plan : 'free';
    const usage = await this.quota.usage(teamId, plan);
    return {
      plan,
      quota: { monthly: usage.monthly.limit, daily: usage.daily.limit },
      used: { month: usage.monthly.used, today: usage.daily.used },
      resets: { month: usage.monthly.resetsAt.toISOString(), today: usage.daily.resetsAt.toISOString() },
    };
  }

  @Get('audit-log')
  @Needs('read_audit_log')
  async auditLog(@Param('teamId') teamId: string, @Query() query: unknown) {
    const page = parseAuditPage(query);
    return presentAuditPage(await this.people.auditLog(teamId, page.limit + 1, page.after), page.limit);
  }
}
