import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, type Transaction } from '@herald/database';
import { DOMAIN_COLUMNS, DomainRow, toDomain } from '../domain.row';
import type { Domain } from '../domain.types';

/**
 * The verifier's queue of domains: which checks are due, the lease a verifier takes on them, and
 * the lock under which a check's result is written over the domain as it is now.
 */
@Injectable()
export class DomainChecksRepository {
  constructor(private readonly db: DataSource) {}

  /** Runs `work` in a new transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Claims up to `limit` domains whose check is due at `now` and leases them until `leaseUntil`,
   * in one short transaction: due rows are locked with SKIP LOCKED, so concurrent verifiers take
   * different ones, and their next check moves past the lease before the lock is released.
   */
  claimDue(now: Date, limit: number, leaseUntil: Date): Promise<Domain[]> {
    return this.db.transaction(async (m) => {
      const rows: DomainRow[] = await m.query(
        `SELECT ${DOMAIN_COLUMNS} FROM domains WHERE next_check_at <= $1 ORDER BY next_check_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [now, limit],
      );
      const due = rows.map(toDomain);
      if (due.length)
        await this.setNextCheck(
          due.map((d) => d.id),
          leaseUntil,
          m,
        );
      return due;
    });
  }

  /** The domain locked until `tx` ends, for writing a verification result over what is there now. */
  async lockById(tx: Transaction, id: string): Promise<Domain | null> {
    const rows: DomainRow[] = await managerOf(this.db, tx).query(`SELECT ${DOMAIN_COLUMNS} FROM domains WHERE id = $1 FOR UPDATE`, [id]);
    return rows.length ? toDomain(rows[0]) : null;
  }

  /** Moves the next check of domains: a verifier's lease on the ones it claimed, or an immediate recheck. */
  async setNextCheck(ids: string[], at: Date, tx?: Transaction): Promise<void> {
    await managerOf(this.db, tx).query(`UPDATE domains SET next_check_at = $2 WHERE id = ANY($1::uuid[])`, [ids, at]);
  }
}
