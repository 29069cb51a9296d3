import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface AuditEntry {
  id: string;
  action: string;
  actorEmail: string | null;
  ip: string | null;
  userAgent: string | null;
  detail: Record<string, unknown>;
  createdAt: Date;
}

export interface NewAuditEntry {
  id: string;
  teamId: string | null;
  userId: string | null;
  actorEmail: string | null;
  action: string;
  ip: string | null;
  userAgent: string | null;
  detail: Record<string, unknown>;
}

/**
 * What people did: sign-ins and MFA changes belong to a user (no team), key and member changes
 * to a team. A team's log shows its own entries and the personal ones of its current members.
 */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly db: DataSource) {}

  async add(entry: NewAuditEntry): Promise<void> {
    await this.db.query(
      `INSERT INTO audit_log (id, team_id, user_id, actor_email, action, ip, user_agent, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [entry.id, entry.teamId, entry.userId, entry.actorEmail, entry.action, entry.ip, entry.userAgent, JSON.stringify(entry.detail)],
    );
  }

  /** Newest first; `after` (an entry id) pages toward older entries. */
  list(teamId: string, limit: number, after: string | null): Promise<AuditEntry[]> {
    return this.db.query(
      `SELECT id, action, actor_email AS "actorEmail", ip, user_agent AS "userAgent", detail, created_at AS "createdAt"
         FROM audit_log a
        WHERE (a.team_id = $1 OR (a.team_id IS NULL AND a.user_id IN (SELECT user_id FROM team_members WHERE team_id = $1)))
          AND ($3::uuid IS NULL OR (a.created_at, a.id) < (SELECT created_at, id FROM audit_log WHERE id = $3))
        ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
      [teamId, limit, after],
    );
  }

  /** A person's own entries (sign-ins, MFA, password, linked accounts, sessions), newest first; `after` as in list. */
  listOfUser(userId: string, limit: number, after: string | null): Promise<AuditEntry[]> {
    return this.db.query(
      `SELECT id, action, actor_email AS "actorEmail", ip, user_agent AS "userAgent", detail, created_at AS "createdAt"
         FROM audit_log a
        WHERE a.user_id = $1 AND a.team_id IS NULL
          AND ($3::uuid IS NULL OR (a.created_at, a.id) < (SELECT created_at, id FROM audit_log WHERE id = $3 AND user_id = $1))
        ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
      [userId, limit, after],
    );
  }
}
