import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { affectedRows } from '@herald/database';
import type { Role } from './roles';

export interface Invitation {
  id: string;
  teamId: string;
  email: string;
  role: Role;
  expiresAt: Date;
  acceptedAt: Date | null;
  createdAt: Date;
}

const COLUMNS = `id, team_id AS "teamId", email, role, expires_at AS "expiresAt", accepted_at AS "acceptedAt", created_at AS "createdAt"`;

/** Invitations to join a team; the link's token is kept only as its SHA-256. */
@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: DataSource) {}

  async create(
    teamId: string,
    row: { id: string; email: string; role: Role; tokenHash: string; invitedBy: string; expiresAt: Date },
  ): Promise<Invitation> {
    const rows: Invitation[] = await this.db.query(
      `INSERT INTO team_invitations (id, team_id, email, role, token_hash, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [row.id, teamId, row.email, row.role, row.tokenHash, row.invitedBy, row.expiresAt],
    );
    return rows[0]!;
  }

  list(teamId: string): Promise<Invitation[]> {
    return this.db.query(`SELECT ${COLUMNS} FROM team_invitations WHERE team_id = $1 AND accepted_at IS NULL ORDER BY created_at DESC, id DESC`, [
      teamId,
    ]);
  }

  async remove(teamId: string, id: string): Promise<boolean> {
    // TypeORM answers a DELETE with [rows, count]: the array itself is never empty.
    const result: unknown = await this.db.query(`DELETE FROM team_invitations WHERE team_id = $1 AND id = $2 AND accepted_at IS NULL`, [teamId, id]);
    return affectedRows(result) === 1;
  }

  /** Marks the invitation accepted and returns it, once: a second accept finds nothing. */
  async accept(tokenHash: string, now: Date): Promise<Invitation | null> {
    // TypeORM answers an UPDATE ... RETURNING with [rows, count].
    const [rows]: [Invitation[], number] = await this.db.query(
      `UPDATE team_invitations SET accepted_at = $2 WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > $2 RETURNING ${COLUMNS}`,
      [tokenHash, now],
    );
    return rows[0] ?? null;
  }
}
