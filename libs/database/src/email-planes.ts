import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { regionOfId } from '@herald/core';
import { dataSourceOptions } from './data-source';
import { DATABASE_CONFIG, type DatabaseConfig } from './database.config';

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
    let ready = this.byUrl.get(url);
    if (!ready) {
      const db = new DataSource(dataSourceOptions({ ...this.config, DATABASE_URL: url }));
      ready = db.initialize();
      this.byUrl.set(url, ready);
      // A failed connection is forgotten, so that the next use tries again.
      ready.catch(() => this.byUrl.get(url) === ready && this.byUrl.delete(url));
    }
    return ready;
  }

  async onApplicationShutdown(): Promise<void> {
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
