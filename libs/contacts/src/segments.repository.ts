import { Injectable } from '@nestjs/common';
import { keysetPage, managerOf, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import { returnedRows } from './returned-rows';
import type { ListPage, Segment } from './contact.types';

interface SegmentRow {
  id: string;
  team_id: string;
  name: string;
  created_at: Date;
}

const COLUMNS = 'id, team_id, name, created_at';

/** A team's segments (Resend's former audiences). Every method takes the team first. */
@Injectable()
export class SegmentsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(teamId: string, id: string, name: string): Promise<Segment> {
    const rows: SegmentRow[] = await this.db.query(`INSERT INTO segments (id, team_id, name) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`, [
      id,
      teamId,
      name,
    ]);
    return toSegment(rows[0]);
  }

  async get(teamId: string, id: string, tx?: Transaction): Promise<Segment | null> {
    const rows: SegmentRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM segments WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toSegment(rows[0]) : null;
  }

  /** Which of these ids are the team's segments. */
  async existing(teamId: string, ids: string[], tx?: Transaction): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows: { id: string }[] = await managerOf(this.db, tx).query(`SELECT id FROM segments WHERE team_id = $1 AND id = ANY($2::uuid[])`, [
      teamId,
      ids,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  async rename(teamId: string, id: string, name: string): Promise<Segment | null> {
    const rows = returnedRows<SegmentRow>(
      await this.db.query(`UPDATE segments SET name = $3 WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [teamId, id, name]),
    );
    return rows.length ? toSegment(rows[0]) : null;
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    const result: unknown = await this.db.query(`DELETE FROM segments WHERE team_id = $1 AND id = $2 RETURNING id`, [teamId, id]);
    return Array.isArray(result) && Array.isArray(result[0]) && result[0].length > 0;
  }

  async listPage(teamId: string, page: ListPage): Promise<{ items: Segment[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<SegmentRow>(this.db, { table: 'segments', columns: COLUMNS, teamId }, page);
    return { items: rows.map(toSegment), hasMore };
  }

  /** The segments a contact belongs to, newest first. */
  async ofContact(teamId: string, contactId: string): Promise<Segment[]> {
    const rows: SegmentRow[] = await this.db.query(
      `SELECT s.id, s.team_id, s.name, s.created_at FROM segments s JOIN segment_contacts sc ON sc.segment_id = s.id
        WHERE s.team_id = $1 AND sc.contact_id = $2 ORDER BY s.created_at DESC, s.id DESC`,
      [teamId, contactId],
    );
    return rows.map(toSegment);
  }
}

function toSegment(row: SegmentRow): Segment {
  return { id: row.id, teamId: row.team_id, name: row.name, createdAt: row.created_at };
}
