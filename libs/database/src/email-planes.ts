import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { HeraldError, regionOfId } from '@herald/core';
import { dataSourceOptions } from './data-source';
import { DATABASE_CONFIG, type DatabaseConfig } from './database.config';
import { isPostgresUnreachable } from './postgres-unavailable';

/** How often a region's database marked unreachable is tried again; also the Retry-After of what it refuses meanwhile. */
export const PLANE_PROBE_MS = 1000;

/**
 * A use of a region's database refused at once, because its last connection attempt found it
 * unreachable and no probe has reached it since: `service_unavailable` (503 with Retry-After),
 * naming the regions. Its `cause` is the failure that marked the database, so
 * `isPostgresUnreachable` knows it for what it is (the outbox and the roles' retries do).
 */
export class EmailPlaneUnreachableError extends HeraldError {
  constructor(
    readonly regions: readonly string[],
    override readonly cause: unknown,
  ) {
    super(
      'service_unavailable',
      `The database of region ${regions.join(', ')} cannot be reached right now, and nothing was stored or read there. Please retry after the number of seconds in the Retry-After header.`,
      Math.ceil(PLANE_PROBE_MS / 1000),
    );
  }
}

/**
 * The email plane of each served region (libs/database planes.ts): the database holding the
 * emails of that region's domains, `REGION_DATABASE_URLS`'s entry for the region, else
 * `DATABASE_URL`. The control plane is TypeORM's default DataSource (`CONTROL_DATABASE_URL`, else
 * `DATABASE_URL`); a region whose database is the control plane's gets that very DataSource, and
 * regions sharing a database share one, so a single-database deployment has one pool, as before.
 *
 * The process's own region's (HERALD_REGION) connects at boot, as the control plane's does: its
 * roles cannot work without it. Another region's connects on first use: a region whose Postgres
 * is down must not keep the others' roles from starting (issue 15, "a region down"). A failed
 * connection is tried again at the next use.
 *
 * A database of its own (not the control plane's) that cannot be reached is refused at once
 * (EmailPlaneUnreachableError) from its first failed connection until a probe, every
 * PLANE_PROBE_MS, reaches it again: without that, every request for a region whose database
 * is partitioned away (a host that drops packets rather than refusing them) would wait the
 * pool's connect timeout before its 503. A statement already sent on an open connection when the
 * partition began still waits for TCP; the requests after it do not.
 */
@Injectable()
export class EmailPlanes implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(EmailPlanes.name);
  /** Each served region's database, by region. */
  private readonly urls = new Map<string, string>();
  /** The served regions grouped by database (normalised URL). */
  private readonly databases = new Map<string, string[]>();
  /** One connecting or connected DataSource per database (by normalised URL). */
  private readonly byUrl = new Map<string, Promise<DataSource>>();
  private homeDb: DataSource | undefined;
  /** The databases (by normalised URL) found unreachable, each with its next probe's timer. */
  private readonly down = new Map<string, { cause: unknown; timer: NodeJS.Timeout | null }>();
  private closed = false;

  constructor(
    @Inject(DATABASE_CONFIG.token) private readonly config: DatabaseConfig,
    private readonly control: DataSource,
  ) {
    this.byUrl.set(normalised(config.CONTROL_DATABASE_URL ?? config.DATABASE_URL), Promise.resolve(control));
    for (const region of config.HERALD_REGIONS) {
      const url = normalised(config.REGION_DATABASE_URLS[region] ?? config.DATABASE_URL);
      this.urls.set(region, url);
      this.databases.set(url, [...(this.databases.get(url) ?? []), region]);
    }
  }

  async onModuleInit(): Promise<void> {
    this.homeDb = await this.of(this.config.HERALD_REGION);
  }

  /** The process's own region's email plane (HERALD_REGION): the worker's, webhooks' and metrics' only one. */
  get home(): DataSource {
    if (!this.homeDb) throw new Error('EmailPlanes.home read before the module was initialised');
    return this.homeDb;
  }

  /** The email plane of a served region. */
  of(region: string): Promise<DataSource> {
    const url = this.urls.get(region);
    if (!url) throw new Error(`region ${region} is not served here (HERALD_REGIONS: ${this.config.HERALD_REGIONS.join(', ')})`);
    return this.connected(url);
  }

  /** The region whose database holds the email (or dispatch) of this id (`regionOfId`), or null for an id that names none. */
  regionOf(id: string): string | null {
    return regionOfId(id, this.config.HERALD_REGIONS);
  }

  /**
   * The email plane holding the email (or dispatch) of this id: its region's (`regionOf`). An id
   * that names no region was made before ids named one, when `DATABASE_URL` held every email:
   * the home region's.
   */
  ofId(id: string): Promise<DataSource> {
    return this.of(this.regionOf(id) ?? this.config.HERALD_REGION);
  }

  /** These ids grouped by the email plane holding each (`ofId`), one group per database. */
  async byId(ids: readonly string[]): Promise<{ db: DataSource; ids: string[] }[]> {
    const groups = new Map<DataSource, string[]>();
    for (const id of ids) {
      const db = await this.ofId(id);
      const group = groups.get(db);
      if (group) group.push(id);
      else groups.set(db, [id]);
    }
    return [...groups].map(([db, group]) => ({ db, ids: group }));
  }

  /**
   * The email plane holding what `probe` looks for (a broadcast's emails, say, which are all in
   * its region's), asked of each database in turn; the home region's when none holds it (so that
   * a read of it finds nothing), or when there is only one.
   */
  async holding(probe: (db: DataSource) => Promise<boolean>): Promise<DataSource> {
    const planes = this.all();
    if (planes.length === 1) return planes[0].db;
    for (const { db } of planes) if (await probe(await db)) return db;
    return this.home;
  }

  /**
   * Every served region's email plane, one entry per database with the regions it holds, for
   * the reads that span regions (a team's emails listed, counted, searched).
   */
  all(): { regions: string[]; db: Promise<DataSource> }[] {
    return [...this.databases].map(([url, regions]) => ({ regions, db: this.connected(url) }));
  }

  private connected(url: string): Promise<DataSource> {
    const down = this.down.get(url);
    if (down) return Promise.reject(new EmailPlaneUnreachableError(this.databases.get(url) ?? [], down.cause));
    let ready = this.byUrl.get(url);
    if (!ready) {
      const db = new DataSource(dataSourceOptions({ ...this.config, DATABASE_URL: url }));
      const connecting = db.initialize().then(() => this.guarded(url, db));
      ready = connecting;
      this.byUrl.set(url, connecting);
      // A failed connection is forgotten, so that the next use (after the probe, if it was unreachable) tries again.
      connecting.catch((error: unknown) => {
        if (this.byUrl.get(url) === connecting) this.byUrl.delete(url);
        this.failed(url, error);
      });
    }
    return ready;
  }

  /** `db` with each connection it takes from its pool refused while `url` is down, and a failure to connect marking it down. */
  private guarded(url: string, db: DataSource): DataSource {
    const driver = db.driver as PostgresDriver;
    const obtain = driver.obtainMasterConnection.bind(driver);
    driver.obtainMasterConnection = async () => {
      const down = this.down.get(url);
      if (down) throw new EmailPlaneUnreachableError(this.databases.get(url) ?? [], down.cause);
      try {
        return await obtain();
      } catch (error) {
        this.failed(url, error);
        throw error;
      }
    };
    return db;
  }

  private failed(url: string, error: unknown): void {
    if (this.closed || this.down.has(url) || !isPostgresUnreachable(error)) return;
    const regions = (this.databases.get(url) ?? []).join(', ');
    this.logger.warn(
      `The database of region ${regions} is unreachable (${String((error as Error).message ?? error)}): its uses are refused until it answers again`,
    );
    this.down.set(url, { cause: error, timer: null });
    this.scheduleProbe(url);
  }

  private scheduleProbe(url: string): void {
    const down = this.down.get(url);
    if (!down || this.closed) return;
    down.timer = setTimeout(() => void this.probe(url), PLANE_PROBE_MS);
    down.timer.unref();
  }

  private async probe(url: string): Promise<void> {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2 * PLANE_PROBE_MS });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
    } catch {
      return this.scheduleProbe(url);
    } finally {
      void client.end().catch(() => undefined);
    }
    if (this.closed) return;
    this.down.delete(url);
    this.logger.log(`The database of region ${(this.databases.get(url) ?? []).join(', ')} answers again: its uses are served`);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.down.values()) if (timer) clearTimeout(timer);
    this.down.clear();
    const own = [...this.byUrl.values()].map((ready) =>
      ready.then(
        (db) => (db === this.control ? undefined : db.destroy()),
        () => undefined,
      ),
    );
    await Promise.all(own).catch((error: Error) => this.logger.warn(`closing the email planes' connections: ${error.message}`));
  }
}

function normalised(url: string): string {
  return new URL(url).href;
}
