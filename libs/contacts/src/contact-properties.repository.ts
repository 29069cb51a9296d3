import { Injectable } from '@nestjs/common';
import { keysetPage, managerOf, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import { returnedRows } from './returned-rows';
import type { ContactProperty, ListPage, PropertyType, PropertyValue } from './contact.types';

interface PropertyRow {
  id: string;
  team_id: string;
  key: string;
  type: PropertyType;
  fallback_value: PropertyValue | null;
  created_at: Date;
}

const COLUMNS = 'id, team_id, key, type, fallback_value, created_at';

/** A team's contact property definitions (key, type and fallback). Every method takes the team first. */
@Injectable()
export class ContactPropertiesRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Inserts the definition unless the key is taken (then answers null). */
  async insert(teamId: string, id: string, key: string, type: PropertyType, fallback: PropertyValue | null): Promise<ContactProperty | null> {
    const rows: PropertyRow[] = await this.db.query(
      `INSERT INTO contact_properties (id, team_id, key, type, fallback_value) VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (team_id, key) DO NOTHING RETURNING ${COLUMNS}`,
      [id, teamId, key, type, fallback === null ? null : JSON.stringify(fallback)],
    );
    return rows.length ? toProperty(rows[0]) : null;
  }

  async get(teamId: string, id: string): Promise<ContactProperty | null> {
    const rows: PropertyRow[] = await this.db.query(`SELECT ${COLUMNS} FROM contact_properties WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toProperty(rows[0]) : null;
  }

  /** Every definition of the team, by key (a team has tens at most). */
  async byKey(teamId: string, tx?: Transaction): Promise<Map<string, ContactProperty>> {
    const rows: PropertyRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM contact_properties WHERE team_id = $1 ORDER BY key`, [
      teamId,
    ]);
    return new Map(rows.map((row) => [row.key, toProperty(row)]));
  }

  async setFallback(teamId: string, id: string, fallback: PropertyValue | null): Promise<ContactProperty | null> {
    const rows = returnedRows<PropertyRow>(
      await this.db.query(`UPDATE contact_properties SET fallback_value = $3::jsonb WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
        teamId,
        id,
        fallback === null ? null : JSON.stringify(fallback),
      ]),
    );
    return rows.length ? toProperty(rows[0]) : null;
  }

  async delete(teamId: string, id: string, tx?: Transaction): Promise<ContactProperty | null> {
    const result: unknown = await managerOf(this.db, tx).query(`DELETE FROM contact_properties WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
      teamId,
      id,
    ]);
    const rows = (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : []) as PropertyRow[];
    return rows.length ? toProperty(rows[0]) : null;
  }

  async listPage(teamId: string, page: ListPage): Promise<{ items: ContactProperty[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<PropertyRow>(this.db, { table: 'contact_properties', columns: COLUMNS, teamId }, page);
    return { items: rows.map(toProperty), hasMore };
  }
}

function toProperty(row: PropertyRow): ContactProperty {
  return { id: row.id, teamId: row.team_id, key: row.key, type: row.type, fallbackValue: row.fallback_value, createdAt: row.created_at };
}
