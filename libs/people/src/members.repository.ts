import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Role } from './roles';

export interface TeamOfUser {
  id: string;
  name: string;
  role: Role;
  region: string;
  plan: string;
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
}

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  twoFactorEnabled: boolean;
}

/** Who belongs to which team with which role. Every team-scoped method takes the team first. */
@Injectable()
export class MembersRepository {
  constructor(private readonly db: DataSource) {}

  async add(teamId: string, userId: string, role: Role): Promise<void> {
    await this.db.query(`INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (team_id, user_id) DO NOTHING`, [
      teamId,
      userId,
      role,
    ]);
  }

  async roleOf(teamId: string, userId: string): Promise<Role | null> {
    const rows: { role: Role }[] = await this.db.query(`SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2`, [teamId, userId]);
    return rows[0]?.role ?? null;
  }

  async teamsOf(userId: string): Promise<TeamOfUser[]> {
    return this.db.query(
      `SELECT t.id, t.name, m.role, t.home_region AS region, t.plan
         FROM team_members m JOIN teams t ON t.id = m.team_id
        WHERE m.user_id = $1 ORDER BY m.created_at, t.id`,
      [userId],
    );
  }

  async list(teamId: string): Promise<Member[]> {
    return this.db.query(
      `SELECT u.id AS "userId", u.email, u.name, m.role, m.created_at AS "joinedAt"
         FROM team_members m JOIN users u ON u.id = m.user_id
        WHERE m.team_id = $1 ORDER BY m.created_at, u.id`,
      [teamId],
    );
  }

  async setRole(teamId: string, userId: string, role: Role): Promise<void> {
    await this.db.query(`UPDATE team_members SET role = $3 WHERE team_id = $1 AND user_id = $2`, [teamId, userId, role]);
  }

  async remove(teamId: string, userId: string): Promise<void> {
    await this.db.query(`DELETE FROM team_members WHERE team_id = $1 AND user_id = $2`, [teamId, userId]);
  }

  async countOwners(teamId: string): Promise<number> {
    const rows: { n: number }[] = await this.db.query(`SELECT count(*)::int AS n FROM team_members WHERE team_id = $1 AND role = 'owner'`, [teamId]);
    return rows[0]?.n ?? 0;
  }

  async userIdByEmail(email: string): Promise<string | null> {
    const rows: { id: string }[] = await this.db.query(`SELECT id FROM users WHERE email = lower($1)`, [email]);
    return rows[0]?.id ?? null;
  }

  /** Only for the development user `herald all` prints (no mailbox to confirm it from). */
  async markEmailVerified(userId: string): Promise<void> {
    await this.db.query(`UPDATE users SET email_verified = true WHERE id = $1`, [userId]);
  }

  async user(userId: string): Promise<UserRecord | null> {
    const rows: UserRecord[] = await this.db.query(
      `SELECT id, email, name, email_verified AS "emailVerified", coalesce(two_factor_enabled, false) AS "twoFactorEnabled" FROM users WHERE id = $1`,
      [userId],
    );
    return rows[0] ?? null;
  }
}
