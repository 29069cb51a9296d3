import { isHeraldError } from '@herald/core';
import { mayChangeMember, requireRole, roleAllows } from './roles';

describe('roles', () => {
  it('lets every role read, owners and admins write, only owners delete the team', () => {
    expect(roleAllows('member', 'read')).toBe(true);
    expect(roleAllows('member', 'write')).toBe(false);
    expect(roleAllows('admin', 'write')).toBe(true);
    expect(roleAllows('admin', 'manage_members')).toBe(true);
    expect(roleAllows('admin', 'read_audit_log')).toBe(true);
    expect(roleAllows('member', 'read_audit_log')).toBe(false);
    expect(roleAllows('admin', 'delete_team')).toBe(false);
    expect(roleAllows('owner', 'delete_team')).toBe(true);
    expect(roleAllows('owner', 'change_owner')).toBe(true);
  });

  it('refuses with insufficient_role, naming the role', () => {
    try {
      requireRole('member', 'write');
      throw new Error('no error');
    } catch (error) {
      expect(isHeraldError(error) && error.code).toBe('insufficient_role');
      expect((error as Error).message).toContain('member');
    }
  });

  it('keeps admins away from owners', () => {
    expect(mayChangeMember('admin', 'member', 'admin')).toBe(true);
    expect(mayChangeMember('admin', 'owner', 'member')).toBe(false);
    expect(mayChangeMember('admin', 'member', 'owner')).toBe(false);
    expect(mayChangeMember('admin', 'member', null)).toBe(true);
    expect(mayChangeMember('owner', 'owner', 'admin')).toBe(true);
    expect(mayChangeMember('member', 'member', null)).toBe(false);
  });
});
