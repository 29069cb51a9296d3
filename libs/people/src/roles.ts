import { HeraldError } from '@herald/core';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** What a role may do in its team (README "Dashboard roles"). */
export type TeamAction = 'read' | 'write' | 'manage_members' | 'read_audit_log' | 'change_owner' | 'delete_team' | 'resume_domain';

export function roleAllows(role: Role, action: TeamAction): boolean {
  switch (action) {
    case 'read':
      return true;
    case 'write':
    case 'manage_members':
    // The team's log holds its members' sign-ins with their addresses: people who manage the team see it.
    case 'read_audit_log':
      return role === 'owner' || role === 'admin';
    case 'change_owner':
    case 'delete_team':
    // Lifting the reputation guardrail's pause of a domain puts the team's sending reputation at stake.
    case 'resume_domain':
      return role === 'owner';
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

export function requireRole(role: Role, action: TeamAction): void {
  if (roleAllows(role, action)) return;
  const who = roleAllows('admin', action) ? 'an owner or an admin' : 'an owner';
  throw new HeraldError('insufficient_role', `Your role (${role}) may not do this; ask ${who} of the team.`);
}

export const isRole = (value: unknown): value is Role => typeof value === 'string' && (ROLES as readonly string[]).includes(value);

/**
 * Whether `actor` may give `target` (a member now holding `current`) the role `next`, or remove
 * them (`next` null). Owners do anything but leave the team without an owner (checked by the
 * caller, which knows the count); admins manage admins and members, never owners.
 */
export function mayChangeMember(actor: Role, current: Role, next: Role | null): boolean {
  if (actor === 'owner') return true;
  if (actor !== 'admin') return false;
  return current !== 'owner' && next !== 'owner';
}
