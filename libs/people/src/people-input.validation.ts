import { z } from 'zod';
import { jsonBody, mustBe, optional, parseOrThrow, required, typeError } from '@herald/http';
import { ROLES, type Role } from './roles';

/* The dashboard's own bodies (teams, members, invitations), checked at the edge with zod. */

const teamName = z
  .string({ error: typeError('a string') })
  .trim()
  .min(1, mustBe('team_name', 'a non-empty string'))
  .max(100, mustBe('team_name', 'at most 100 characters'));

export const newTeamBody = (regions: readonly string[]) =>
  jsonBody(
    z.object({
      name: required(teamName, 'The `name` field is required.'),
      region: optional(z.enum(regions as [string, ...string[]], { error: () => `The \`region\` field must be one of: ${regions.join(', ')}.` })),
    }),
  );

/** The extra fields of better-auth's sign-up body: both optional (a team name is made up from the user's name). */
export const signUpExtras = (regions: readonly string[]) =>
  z.object({
    team_name: optional(teamName),
    region: optional(z.enum(regions as [string, ...string[]], { error: () => `The \`region\` field must be one of: ${regions.join(', ')}.` })),
  });

const role = z.enum(ROLES, { error: () => `The \`role\` field must be one of: ${ROLES.join(', ')}.` });

export const roleBody = jsonBody(z.object({ role: required(role, 'The `role` field is required.') }));

export const invitationBody = jsonBody(
  z.object({
    email: required(
      z.email({ error: () => 'Invalid `email` field. The email address needs to follow the `email@example.com` format.' }),
      'The `email` field is required.',
    ),
    role: optional(
      z.enum(['admin', 'member'], { error: () => "The `role` field must be admin or member (an owner is made by changing a member's role)." }),
    ),
  }),
);

export function parseTeam(regions: readonly string[], body: unknown): { name: string; region?: string } {
  return parseOrThrow(newTeamBody(regions), body);
}

export function parseRole(body: unknown): Role {
  return parseOrThrow(roleBody, body).role;
}

export function parseInvitation(body: unknown): { email: string; role: Role } {
  const parsed = parseOrThrow(invitationBody, body);
  return { email: parsed.email.toLowerCase(), role: parsed.role ?? 'member' };
}
