import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { affectedRows, keysetPage, managerOf, withinTransaction, type Transaction } from '@herald/database';
import { DkimKeyRow, DOMAIN_COLUMNS as COLUMNS, DomainRow, toDomain, toKey } from './domain.row';
import { DkimKey, DkimKeyState, DmarcReport, Domain, DomainPause, DomainRecord, DomainStatus, RecordStatus } from './domain.types';

export type NewDomain = Omit<
  Domain,
  'status' | 'dmarc' | 'verificationStartedAt' | 'verifiedAt' | 'lastCheckedAt' | 'nextCheckAt' | 'createdAt' | 'pausedAt' | 'pause' | 'resumedAt'
>;
export type NewDkimKey = Omit<DkimKey, 'dnsStatus' | 'createdAt' | 'activatedAt' | 'retiredAt'>;

/** What a verification pass writes back. */
export interface VerificationResult {
  status: DomainStatus;
  records: DomainRecord[];
  dmarc: DmarcReport | null;
  /** DNS status per DKIM key id (a key's own record). */
  dkimStatuses: Record<string, RecordStatus>;
  verifiedAt: Date | null;
  nextCheckAt: Date | null;
}

export type DomainChanges = Partial<Pick<Domain, 'openTracking' | 'clickTracking' | 'trackingSubdomain' | 'tls' | 'records' | 'status'>>;

/** A page of a team's domains, newest first; `after` pages toward older ones, `before` toward newer. */
export interface DomainPage {
  limit: number;
  after: string | null;
  before: string | null;
}

/** What a locked change of a domain (modify) does: its settings, new keys, key state changes. */
export interface DomainModification {
  settings?: Pick<DomainChanges, 'openTracking' | 'clickTracking' | 'trackingSubdomain' | 'tls'>;
  insertKeys?: NewDkimKey[];
  keyStates?: { keyId: string; state: DkimKeyState }[];
}

export interface ModifiedDomain {
  /** The domain after the change, records rebuilt. */
  domain: Domain;
  /** Its keys that are not retired, after the change. */
  keys: DkimKey[];
  /** False when the plan decided there was nothing to do. */
  changed: boolean;
}

interface PgError {
  code?: string;
  constraint?: string;
  driverError?: PgError;
}

/** Postgres unique violation on the domain name (another team, or the same, has it). */
export function isDomainNameTaken(error: unknown): boolean {
  const e = (error ?? {}) as PgError;
  const pg = e.driverError ?? e;
  return pg.code === '23505' && pg.constraint === 'domains_name_key';
}

/**
 * Sending domains and their DKIM keys. Every tenant method takes the team first; the methods
 * for background work (by id) are named for what they serve. The verifier's queue (due domains,
 * leases, locks) is DomainChecksRepository's.
 */
@Injectable()
export class DomainsRepository {
  constructor(private readonly db: DataSource) {}

  /** Runs `work` in a new transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Inserts a domain with its keys atomically (in `tx` when given). Throws a unique violation
   * (isDomainNameTaken) if the name exists.
   */
  async create(domain: NewDomain, keys: NewDkimKey[], tx?: Transaction): Promise<Domain> {
    return withinTransaction(this.db, tx, async (m) => {
      const [row]: DomainRow[] = await m.query(
        `INSERT INTO domains (id, team_id, name, region, custom_return_path, open_tracking, click_tracking,
           tracking_subdomain, tls, records)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
        [
          domain.id,
          domain.teamId,
          domain.name,
          domain.region,
          domain.customReturnPath,
          domain.openTracking,
          domain.clickTracking,
          domain.trackingSubdomain,
          domain.tls,
          JSON.stringify(domain.records),
        ],
      );
      for (const key of keys) await this.insertKey(m, key);
      return toDomain(row);
    });
  }

  async insertKey(tx: Transaction, key: NewDkimKey): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO dkim_keys (id, domain_id, selector, algorithm, public_key, private_key, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [key.id, key.domainId, key.selector, key.algorithm, key.publicKey, key.privateKeyEncrypted, key.state],
    );
  }

  async get(teamId: string, id: string, tx?: Transaction): Promise<Domain | null> {
    const rows: DomainRow[] = await managerOf(this.db, tx).query(`SELECT ${COLUMNS} FROM domains WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toDomain(rows[0]) : null;
  }

  /** The team's domain with this name (case-insensitive), e.g. the `from` domain of an email. */
  async findByName(teamId: string, name: string): Promise<Domain | null> {
    const rows: DomainRow[] = await this.db.query(`SELECT ${COLUMNS} FROM domains WHERE team_id = $1 AND lower(name) = lower($2)`, [teamId, name]);
    return rows.length ? toDomain(rows[0]) : null;
  }

  /** Pauses a domain's new sends unless it is paused already; answers the paused domain, or null. */
  async pause(teamId: string, id: string, pause: DomainPause, tx?: Transaction): Promise<Domain | null> {
    const [rows]: [DomainRow[], number] = await managerOf(this.db, tx).query(
      `UPDATE domains SET paused_at = now(), pause = $3 WHERE team_id = $1 AND id = $2 AND paused_at IS NULL RETURNING ${COLUMNS}`,
      [teamId, id, JSON.stringify(pause)],
    );
    return rows.length ? toDomain(rows[0]) : null;
  }

  /** Lifts a pause; answers the resumed domain, or null when it was not paused (or not the team's). */
  async resume(teamId: string, id: string, tx?: Transaction): Promise<Domain | null> {
    const [rows]: [DomainRow[], number] = await managerOf(this.db, tx).query(
      `UPDATE domains SET paused_at = NULL, pause = NULL, resumed_at = now()
       WHERE team_id = $1 AND id = $2 AND paused_at IS NOT NULL RETURNING ${COLUMNS}`,
      [teamId, id],
    );
    return rows.length ? toDomain(rows[0]) : null;
  }

  /** Whoever holds this name, for operators (`herald domain verify NAME`) and the conflict check. */
  async findAnyByName(name: string): Promise<Domain | null> {
    const rows: DomainRow[] = await this.db.query(`SELECT ${COLUMNS} FROM domains WHERE lower(name) = lower($1)`, [name]);
    return rows.length ? toDomain(rows[0]) : null;
  }

  async getById(id: string): Promise<Domain | null> {
    const rows: DomainRow[] = await this.db.query(`SELECT ${COLUMNS} FROM domains WHERE id = $1`, [id]);
    return rows.length ? toDomain(rows[0]) : null;
  }

  async list(teamId: string): Promise<Domain[]> {
    const rows: DomainRow[] = await this.db.query(`SELECT ${COLUMNS} FROM domains WHERE team_id = $1 ORDER BY created_at DESC, id DESC`, [teamId]);
    return rows.map(toDomain);
  }

  /** Newest first, `limit` at most, and whether there are more beyond the page. */
  async listPage(teamId: string, page: DomainPage): Promise<{ items: Domain[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<DomainRow>(this.db, { table: 'domains', columns: COLUMNS, teamId }, page);
    return { items: rows.map(toDomain), hasMore };
  }

  async update(teamId: string, id: string, changes: DomainChanges): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE domains SET
         open_tracking = coalesce($3, open_tracking),
         click_tracking = coalesce($4, click_tracking),
         tracking_subdomain = CASE WHEN $5::boolean THEN $6 ELSE tracking_subdomain END,
         tls = coalesce($7, tls),
         records = coalesce($8::jsonb, records),
         status = coalesce($9, status)
       WHERE team_id = $1 AND id = $2`,
      [
        teamId,
        id,
        changes.openTracking ?? null,
        changes.clickTracking ?? null,
        changes.trackingSubdomain !== undefined,
        changes.trackingSubdomain ?? null,
        changes.tls ?? null,
        changes.records ? JSON.stringify(changes.records) : null,
        changes.status ?? null,
      ],
    );
    return affectedRows(result) === 1;
  }

  async delete(teamId: string, id: string, tx?: Transaction): Promise<Domain | null> {
    // TypeORM answers a DELETE (and an UPDATE) with [rows, count], RETURNING or not.
    const [rows]: [DomainRow[], number] = await managerOf(this.db, tx).query(
      `DELETE FROM domains WHERE team_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [teamId, id],
    );
    return rows.length ? toDomain(rows[0]) : null;
  }

  /** Marks a verification requested (POST /domains/:id/verify): checked at the next pass. */
  async requestVerification(teamId: string, id: string, at: Date, tx?: Transaction): Promise<boolean> {
    const result = await managerOf(this.db, tx).query(
      `UPDATE domains SET next_check_at = $3,
         verification_started_at = coalesce(verification_started_at, $3),
         status = CASE WHEN status = 'not_started' THEN 'pending' ELSE status END
       WHERE team_id = $1 AND id = $2`,
      [teamId, id, at],
    );
    return affectedRows(result) === 1;
  }

  /** Writes what a check found (the verifier, in its lock on the domain; dev tools and tests mark domains verified). */
  async saveVerification(id: string, result: VerificationResult, tx?: Transaction): Promise<void> {
    const m = managerOf(this.db, tx);
    await m.query(
      `UPDATE domains SET status = $2, records = $3, dmarc = $4, verified_at = $5, next_check_at = $6, last_checked_at = now()
       WHERE id = $1`,
      [id, result.status, JSON.stringify(result.records), result.dmarc ? JSON.stringify(result.dmarc) : null, result.verifiedAt, result.nextCheckAt],
    );
    for (const [keyId, status] of Object.entries(result.dkimStatuses)) {
      await m.query(`UPDATE dkim_keys SET dns_status = $3 WHERE domain_id = $1 AND id = $2`, [id, keyId, status]);
    }
  }

  /** Keys of a domain that are not retired, oldest first. */
  async keys(domainId: string, tx?: Transaction): Promise<DkimKey[]> {
    const rows: DkimKeyRow[] = await managerOf(this.db, tx).query(
      `SELECT * FROM dkim_keys WHERE domain_id = $1 AND state <> 'retired' ORDER BY created_at, id`,
      [domainId],
    );
    return rows.map(toKey);
  }

  /** Every selector the domain has used, retired keys' included: a new key must not reuse one. */
  async selectors(domainId: string): Promise<string[]> {
    const rows: { selector: string }[] = await this.db.query(`SELECT selector FROM dkim_keys WHERE domain_id = $1`, [domainId]);
    return rows.map((r) => r.selector);
  }

  /**
   * Changes a domain under a lock on its row, so that concurrent changes (a PATCH, a key
   * rotation, the verifier activating or retiring keys) apply one after the other, each to what
   * the previous one left. `plan` sees the domain and its keys that are not retired and says
   * what to change (null: nothing; a throw rolls back); `records` then rebuilds the domain's
   * records from the domain and keys as they are after the change. `teamId` null is for
   * background work that has only the domain id (the verifier). Null when there is no such domain.
   * Runs in `tx` when given (the lock then lasts until that one ends).
   */
  async modify(
    teamId: string | null,
    domainId: string,
    plan: (domain: Domain, keys: DkimKey[]) => DomainModification | null,
    records: (domain: Domain, keys: DkimKey[]) => DomainRecord[],
    tx?: Transaction,
  ): Promise<ModifiedDomain | null> {
    return withinTransaction(this.db, tx, async (m) => {
      const found: DomainRow[] = await m.query(
        `SELECT ${COLUMNS} FROM domains WHERE id = $1 AND ($2::uuid IS NULL OR team_id = $2::uuid) FOR UPDATE`,
        [domainId, teamId],
      );
      if (!found.length) return null;
      const domain = toDomain(found[0]);
      const before = await this.keys(domainId, m);
      const change = plan(domain, before);
      if (!change) return { domain, keys: before, changed: false };
      for (const key of change.insertKeys ?? []) await this.insertKey(m, key);
      for (const { keyId, state } of change.keyStates ?? []) await this.setKeyState(domainId, keyId, state, m);
      const keys = await this.keys(domainId, m);
      const settings = change.settings ?? {};
      const rebuilt = records({ ...domain, ...settings }, keys);
      const [rows]: [DomainRow[], number] = await m.query(
        `UPDATE domains SET
           open_tracking = coalesce($2, open_tracking),
           click_tracking = coalesce($3, click_tracking),
           tls = coalesce($4, tls),
           tracking_subdomain = coalesce($5, tracking_subdomain),
           records = $6
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [
          domainId,
          settings.openTracking ?? null,
          settings.clickTracking ?? null,
          settings.tls ?? null,
          settings.trackingSubdomain ?? null,
          JSON.stringify(rebuilt),
        ],
      );
      return { domain: toDomain(rows[0]), keys, changed: true };
    });
  }

  async setKeyState(domainId: string, keyId: string, state: DkimKeyState, tx?: Transaction): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE dkim_keys SET state = $3,
         activated_at = CASE WHEN $3 = 'active' THEN now() ELSE activated_at END,
         retired_at = CASE WHEN $3 = 'retired' THEN now() ELSE retired_at END
       WHERE domain_id = $1 AND id = $2`,
      [domainId, keyId, state],
    );
  }
}
