import type { DataSource, EntityManager } from 'typeorm';

/**
 * A database transaction in progress, as a service hands it from one repository to another
 * (emails and their idempotency record, a domain change and its event). A service can only
 * pass it on: it has nothing to query with and names no TypeORM type. Repositories read it
 * with `managerOf`. TypeORM's transactional EntityManager is one, so a repository's
 * `db.transaction((m) => ...)` hands `m` on as it is.
 */
export interface Transaction {
  /** Structural only: what makes an EntityManager a Transaction; not for services to read. */
  readonly queryRunner?: unknown;
}

/** The entity manager to query with (repositories only): `tx`'s, or the pool's outside a transaction. */
export function managerOf(db: DataSource, tx?: Transaction): EntityManager {
  return (tx as EntityManager | undefined) ?? db.manager;
}

/**
 * Runs `work` in `tx` when it is an open transaction, in a new one otherwise (a repository
 * method that must be atomic whether or not its caller has a transaction).
 */
export function withinTransaction<T>(db: DataSource, tx: Transaction | undefined, work: (m: EntityManager) => Promise<T>): Promise<T> {
  const m = managerOf(db, tx);
  return m.queryRunner?.isTransactionActive ? work(m) : m.transaction(work);
}
