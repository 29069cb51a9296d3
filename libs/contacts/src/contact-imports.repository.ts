import { Injectable } from '@nestjs/common';
import { keysetPage, managerOf, type Transaction } from '@herald/database';
import { DataSource } from 'typeorm';
import { returnedRows } from './returned-rows';
import type { ListPage, PropertyValue, TopicSubscription } from './contact.types';

export type ImportStatus = 'queued' | 'in_progress' | 'completed' | 'failed';
export const IMPORT_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const satisfies readonly ImportStatus[];
export type OnConflict = 'upsert' | 'skip';

export interface ImportCounts {
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** A row of the file the import did not take, and why (`line`: the file's line, the header being 1). */
export interface RejectedRow {
  line: number;
  email: string | null;
  reason: string;
}

export interface ContactImport {
  id: string;
  teamId: string;
  status: ImportStatus;
  onConflict: OnConflict;
  counts: ImportCounts;
  rejectedRows: RejectedRow[];
  error: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

interface ImportRow {
  id: string;
  team_id: string;
  status: ImportStatus;
  on_conflict: OnConflict;
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  rejected_rows: RejectedRow[];
  error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = 'id, team_id, status, on_conflict, total, created, updated, skipped, failed, rejected_rows, error, created_at, completed_at';

/** One row of the file as it will be written: absent cells are null and leave an existing contact's value as it is. */
export interface ImportedContact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  unsubscribed: boolean | null;
  properties: Record<string, PropertyValue>;
}

/** CSV imports of contacts as the API shows them, and the batched writes their parts make. Every method takes the team first. */
@Injectable()
export class ContactImportsRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async get(teamId: string, id: string): Promise<ContactImport | null> {
    const rows: ImportRow[] = await this.db.query(`SELECT ${COLUMNS} FROM contact_imports WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toImport(rows[0]) : null;
  }

  async listPage(teamId: string, page: ListPage, status: ImportStatus | null): Promise<{ items: ContactImport[]; hasMore: boolean }> {
    const equals = status ? { status } : {};
    const { rows, hasMore } = await keysetPage<ImportRow>(this.db, { table: 'contact_imports', columns: COLUMNS, teamId, equals }, page);
    return { items: rows.map(toImport), hasMore };
  }

  /** Creates the contacts whose addresses are new; answers the emails created, with their ids. */
  async createNew(teamId: string, rows: ImportedContact[], tx: Transaction): Promise<Map<string, string>> {
    if (!rows.length) return new Map();
    const created: { id: string; email: string }[] = await managerOf(this.db, tx).query(
      `INSERT INTO contacts (id, team_id, email, first_name, last_name, unsubscribed, properties)
       SELECT r.id, $1, r.email, r.first_name, r.last_name, COALESCE(r.unsubscribed, false), r.properties
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::jsonb[]) AS r(id, email, first_name, last_name, unsubscribed, properties)
       ON CONFLICT (team_id, email) DO NOTHING RETURNING id, email`,
      [teamId, ...columns(rows)],
    );
    return new Map(created.map((r) => [r.email, r.id]));
  }

  /** Updates existing contacts with the cells given (an empty cell keeps the value); answers the emails updated, with their ids. */
  async updateExisting(teamId: string, rows: ImportedContact[], tx: Transaction): Promise<Map<string, string>> {
    if (!rows.length) return new Map();
    const updated = returnedRows<{ id: string; email: string }>(
      await managerOf(this.db, tx).query(
        `UPDATE contacts c SET first_name = COALESCE(r.first_name, c.first_name), last_name = COALESCE(r.last_name, c.last_name),
              unsubscribed = COALESCE(r.unsubscribed, c.unsubscribed), properties = c.properties || r.properties, updated_at = now()
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::jsonb[]) AS r(id, email, first_name, last_name, unsubscribed, properties)
        WHERE c.team_id = $1 AND c.email = r.email
       RETURNING c.id, c.email`,
        [teamId, ...columns(rows)],
      ),
    );
    return new Map(updated.map((r) => [r.email, r.id]));
  }

  async addMemberships(
    teamId: string,
    contactIds: string[],
    segmentIds: string[],
    topics: { id: string; subscription: TopicSubscription }[],
    tx: Transaction,
  ) {
    if (!contactIds.length) return;
    const m = managerOf(this.db, tx);
    if (segmentIds.length) {
      await m.query(
        `INSERT INTO segment_contacts (segment_id, contact_id, team_id) SELECT s, c, $1 FROM unnest($2::uuid[]) AS s, unnest($3::uuid[]) AS c ON CONFLICT DO NOTHING`,
        [teamId, segmentIds, contactIds],
      );
    }
    if (topics.length) {
      await m.query(
        `INSERT INTO contact_topics (contact_id, topic_id, team_id, subscription)
         SELECT c, t.id, $1, t.subscription FROM unnest($2::uuid[]) AS c, unnest($3::uuid[], $4::text[]) AS t(id, subscription)
         ON CONFLICT (contact_id, topic_id) DO UPDATE SET subscription = excluded.subscription, updated_at = now()`,
        [teamId, contactIds, topics.map((t) => t.id), topics.map((t) => t.subscription)],
      );
    }
  }
}

function columns(rows: ImportedContact[]) {
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.email),
    rows.map((r) => r.firstName),
    rows.map((r) => r.lastName),
    rows.map((r) => r.unsubscribed),
    rows.map((r) => JSON.stringify(r.properties)),
  ];
}

function toImport(row: ImportRow): ContactImport {
  return {
    id: row.id,
    teamId: row.team_id,
    status: row.status,
    onConflict: row.on_conflict,
    counts: { total: row.total, created: row.created, updated: row.updated, skipped: row.skipped, failed: row.failed },
    rejectedRows: row.rejected_rows,
    error: row.error,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}
