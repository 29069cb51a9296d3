import { Injectable } from '@nestjs/common';
import { keysetPage, managerOf, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import { returnedRows } from './returned-rows';
import type { ListPage, Topic, TopicSubscription, TopicVisibility } from './contact.types';

interface TopicRow {
  id: string;
  team_id: string;
  name: string;
  description: string | null;
  default_subscription: TopicSubscription;
  visibility: TopicVisibility;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, team_id, name, description, default_subscription, visibility, created_at, updated_at';

export interface NewTopic {
  id: string;
  name: string;
  description: string | null;
  defaultSubscription: TopicSubscription;
  visibility: TopicVisibility;
}

/** Absent fields are kept; default_subscription cannot change. */
export interface TopicPatch {
  name?: string;
  description?: string | null;
  visibility?: TopicVisibility;
}

/** A team's topics (the subscription preferences its contacts see). Every method takes the team first. */
@Injectable()
export class TopicsRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async insert(teamId: string, topic: NewTopic, tx?: Transaction): Promise<Topic> {
    const rows: TopicRow[] = await managerOf(this.db, tx).query(
      `INSERT INTO topics (id, team_id, name, description, default_subscription, visibility) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [topic.id, teamId, topic.name, topic.description, topic.defaultSubscription, topic.visibility],
    );
    return toTopic(rows[0]);
  }

  async get(teamId: string, id: string, tx?: Transaction): Promise<Topic | null> {
    const rows: TopicRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM topics WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toTopic(rows[0]) : null;
  }

  /** Every topic of the team, oldest first (a team has a handful). */
  async all(teamId: string, tx?: Transaction): Promise<Topic[]> {
    const rows: TopicRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM topics WHERE team_id = $1 ORDER BY created_at, id`, [teamId]);
    return rows.map(toTopic);
  }

  async update(teamId: string, id: string, patch: TopicPatch, tx?: Transaction): Promise<Topic | null> {
    const sets = ['updated_at = now()'];
    const params: unknown[] = [teamId, id];
    for (const [column, value] of [
      ['name', patch.name],
      ['description', patch.description],
      ['visibility', patch.visibility],
    ] as const) {
      if (value === undefined) continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    const rows = returnedRows<TopicRow>(
      await managerOf(this.db, tx).query(`UPDATE topics SET ${sets.join(', ')} WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, params),
    );
    return rows.length ? toTopic(rows[0]) : null;
  }

  async delete(teamId: string, id: string, tx?: Transaction): Promise<Topic | null> {
    const result: unknown = await managerOf(this.db, tx).query(`DELETE FROM topics WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
      teamId,
      id,
    ]);
    const rows = (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : []) as TopicRow[];
    return rows.length ? toTopic(rows[0]) : null;
  }

  async listPage(teamId: string, page: ListPage): Promise<{ items: Topic[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<TopicRow>(this.db, { table: 'topics', columns: COLUMNS, teamId }, page);
    return { items: rows.map(toTopic), hasMore };
  }
}

function toTopic(row: TopicRow): Topic {
  return {
    id: row.id,
    teamId: row.team_id,
    name: row.name,
    description: row.description,
    defaultSubscription: row.default_subscription,
    visibility: row.visibility,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
