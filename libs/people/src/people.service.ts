import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { TeamsService } from '@herald/accounts';
import { heraldClock, HeraldError, isUuid, newId } from '@herald/core';
import { AuditLogRepository, type AuditEntry } from './audit-log.repository';
import { InvitationsRepository, type Invitation } from './invitations.repository';
import { MembersRepository, type Member, type TeamOfUser, type UserRecord } from './members.repository';
import { PEOPLE_CONFIG, type PeopleConfig } from './people.config';
import { parseInvitation, parseRole, parseTeam } from './people-input.validation';
import { mayChangeMember, requireRole, type Role, type TeamAction } from './roles';
import { SystemMailer } from './system-mailer.service';

/** Who is acting, and from where (for the audit log). */
export interface Actor {
  userId: string;
  email: string;
  ip: string | null;
  userAgent: string | null;
}

const INVITATION_DAYS = 7;
const NOT_FOUND = 'Team not found';

/** Users' teams, roles, invitations and the audit log. */
@Injectable()
export class PeopleService {
  constructor(
    @Inject(PEOPLE_CONFIG.token) private readonly config: PeopleConfig,
    private readonly teams: TeamsService,
    private readonly members: MembersRepository,
    private readonly invitations: InvitationsRepository,
    private readonly audit: AuditLogRepository,
    private readonly mailer: SystemMailer,
  ) {}

  /** A new user's first team, of which they are the owner. */
  async createFirstTeam(user: { id: string; name: string; email: string }, extras: { team_name?: string; region?: string }): Promise<void> {
    const name = extras.team_name ?? `${user.name || user.email.split('@')[0]}'s team`;
    const team = await this.teams.create({ name: name.slice(0, 100), region: extras.region });
    await this.members.add(team.id, user.id, 'owner');
  }

  async createTeam(actor: Actor, body: unknown): Promise<TeamOfUser> {
    const input = parseTeam(this.config.HERALD_REGIONS, body);
    const team = await this.teams.create({ name: input.name, region: input.region });
    await this.members.add(team.id, actor.userId, 'owner');
    await this.record(actor, team.id, 'team.created', { name: team.name });
    return { id: team.id, name: team.name, role: 'owner', region: team.homeRegion, plan: team.plan };
  }

  userIdByEmail(email: string): Promise<string | null> {
    return this.members.userIdByEmail(email);
  }

  /** `herald all` on a developer's machine: the development user, verified, an owner of `teamId`. */
  async adoptDevelopmentUser(userId: string, teamId: string): Promise<void> {
    await this.members.markEmailVerified(userId);
    await this.members.add(teamId, userId, 'owner');
  }

  user(userId: string): Promise<UserRecord | null> {
    return this.members.user(userId);
  }

  teamsOf(userId: string): Promise<TeamOfUser[]> {
    return this.members.teamsOf(userId);
  }

  /**
   * The caller's role in `teamId` when it may do `action`. Not a member: 404 `not_found`, as for a
   * team that does not exist (no hint it does); a member beyond their role: 403 `insufficient_role`.
   */
  async access(teamId: string, userId: string, action: TeamAction): Promise<Role> {
    const role = isUuid(teamId) ? await this.members.roleOf(teamId, userId) : null;
    if (!role) throw new HeraldError('not_found', NOT_FOUND);
    requireRole(role, action);
    return role;
  }

  listMembers(teamId: string): Promise<Member[]> {
    return this.members.list(teamId);
  }

  async changeRole(teamId: string, actor: Actor, actorRole: Role, userId: string, body: unknown): Promise<Member> {
    const next = parseRole(body);
    const current = await this.memberRole(teamId, userId);
    if (!mayChangeMember(actorRole, current, next))
      throw new HeraldError('insufficient_role', "Only an owner may make someone an owner or change an owner's role.");
    if (current === 'owner' && next !== 'owner' && (await this.members.countOwners(teamId)) === 1) {
      throw new HeraldError('validation_error', 'A team keeps at least one owner: make someone else an owner first.');
    }
    await this.members.setRole(teamId, userId, next);
    await this.record(actor, teamId, 'member.role_changed', { user_id: userId, from: current, to: next });
    return (await this.members.list(teamId)).find((m) => m.userId === userId)!;
  }

  async removeMember(teamId: string, actor: Actor, actorRole: Role, userId: string): Promise<void> {
    const current = await this.memberRole(teamId, userId);
    if (!mayChangeMember(actorRole, current, null)) throw new HeraldError('insufficient_role', 'Only an owner may remove an owner.');
    if (current === 'owner' && (await this.members.countOwners(teamId)) === 1) {
      throw new HeraldError('validation_error', 'A team keeps at least one owner: make someone else an owner first.');
    }
    await this.members.remove(teamId, userId);
    await this.record(actor, teamId, 'member.removed', { user_id: userId, role: current });
  }

  listInvitations(teamId: string): Promise<Invitation[]> {
    return this.invitations.list(teamId);
  }

  /** Creates the invitation and emails its link through Herald; the token exists only in that link. */
  async invite(teamId: string, actor: Actor, body: unknown, dashboardUrl: string): Promise<Invitation> {
    const input = parseInvitation(body);
    const team = await this.teams.get(teamId);
    const token = randomBytes(24).toString('base64url');
    const invitation = await this.invitations.create(teamId, {
      id: newId(),
      email: input.email,
      role: input.role,
      tokenHash: hashToken(token),
      invitedBy: actor.userId,
      expiresAt: new Date(heraldClock.nowMs() + INVITATION_DAYS * 86400_000),
    });
    const link = `${dashboardUrl}/dashboard/invitations/${token}`;
    await this.mailer.deliver(
      input.email,
      `Join ${team.name} on Herald`,
      `${actor.email} invited you to join ${team.name} on Herald as ${input.role}.\n\nAccept: ${link}\n\nThe link works for ${INVITATION_DAYS} days.`,
      `<p>${escapeHtml(actor.email)} invited you to join <b>${escapeHtml(team.name)}</b> on Herald as ${input.role}.</p><p><a href="${link}">Accept the invitation</a></p><p>The link works for ${INVITATION_DAYS} days.</p>`,
    );
    await this.record(actor, teamId, 'invitation.created', { email: input.email, role: input.role });
    return invitation;
  }

  async revokeInvitation(teamId: string, actor: Actor, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.invitations.remove(teamId, id))) throw new HeraldError('not_found', 'Invitation not found');
    await this.record(actor, teamId, 'invitation.revoked', { invitation_id: id });
  }

  /** The signed-in user joins the team of a valid, unused invitation sent to their address. */
  async acceptInvitation(actor: Actor, token: string): Promise<TeamOfUser> {
    const invitation = await this.invitations.accept(hashToken(token), heraldClock.now());
    if (!invitation) throw new HeraldError('not_found', 'Invitation not found, already used or expired');
    await this.members.add(invitation.teamId, actor.userId, invitation.role);
    await this.record(actor, invitation.teamId, 'member.joined', { role: invitation.role, invited_as: invitation.email });
    return (await this.members.teamsOf(actor.userId)).find((t) => t.id === invitation.teamId)!;
  }

  auditLog(teamId: string, limit: number, after: string | null): Promise<AuditEntry[]> {
    return this.audit.list(teamId, limit, after);
  }

  /** What concerns the person only: their sign-ins, MFA, password, linked accounts and sessions. */
  accountLog(userId: string, limit: number, after: string | null): Promise<AuditEntry[]> {
    return this.audit.listOfUser(userId, limit, after);
  }

  /** One audit entry; `teamId` null for what concerns the person only (sign-ins, MFA). */
  async record(actor: Actor, teamId: string | null, action: string, detail: Record<string, unknown> = {}): Promise<void> {
    await this.audit.add({
      id: newId(),
      teamId,
      userId: actor.userId,
      actorEmail: actor.email,
      action,
      ip: actor.ip,
      userAgent: actor.userAgent?.slice(0, 500) ?? null,
      detail,
    });
  }

  private async memberRole(teamId: string, userId: string): Promise<Role> {
    const role = await this.members.roleOf(teamId, userId);
    if (!role) throw new HeraldError('not_found', 'Member not found');
    return role;
  }
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
