import { isHeraldError } from '@herald/core';
import { parseInvitation, parseRole, parseTeam, signUpExtras } from './people-input.validation';

const REGIONS = ['us-east-1', 'eu-west-1'];

function errorOf(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (isHeraldError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('no error');
}

describe('people input', () => {
  it('reads a team with an optional region of the deployment', () => {
    expect(parseTeam(REGIONS, { name: ' Acme ', region: 'eu-west-1' })).toEqual({ name: 'Acme', region: 'eu-west-1' });
    expect(parseTeam(REGIONS, { name: 'Acme' })).toEqual({ name: 'Acme' });
    expect(errorOf(() => parseTeam(REGIONS, { name: 'Acme', region: 'mars-1' }))).toEqual({
      code: 'validation_error',
      message: 'The `region` field must be one of: us-east-1, eu-west-1.',
    });
    expect(errorOf(() => parseTeam(REGIONS, {}))).toEqual({ code: 'missing_required_field', message: 'The `name` field is required.' });
  });

  it('checks sign-up extras', () => {
    expect(signUpExtras(REGIONS).safeParse({ team_name: 'Acme', region: 'us-east-1', email: 'x@y.z' }).success).toBe(true);
    expect(signUpExtras(REGIONS).safeParse({ region: 'nowhere' }).success).toBe(false);
  });

  it('reads roles and invitations', () => {
    expect(parseRole({ role: 'admin' })).toBe('admin');
    expect(errorOf(() => parseRole({ role: 'king' })).message).toBe('The `role` field must be one of: owner, admin, member.');
    expect(parseInvitation({ email: 'Jane@Example.com' })).toEqual({ email: 'jane@example.com', role: 'member' });
    expect(errorOf(() => parseInvitation({ email: 'jane', role: 'member' })).message).toContain('`email`');
    expect(errorOf(() => parseInvitation({ email: 'jane@example.com', role: 'owner' })).message).toContain('admin or member');
  });
});
