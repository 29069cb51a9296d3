import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { heraldClock, PeriodicJob } from '@herald/core';
import { DataSource } from 'typeorm';

/** How often the offset is measured again. */
const SYNC_INTERVAL_MS = 60_000;
/** A new measurement this close to the current offset is noise (a round trip's asymmetry): kept as it is. */
const NOISE_MS = 100;
/** An offset this large is worth a warning: the host's clock is wrong, and its NTP should be looked at. */
const WARN_MS = 1_000;

/**
 * Keeps Herald's clock (`heraldClock`, libs/core) on Postgres's: at boot and every minute it reads
 * Postgres's `clock_timestamp()` and takes the host's time at the middle of that round trip as the
 * same moment. Postgres is the one clock every role of a region already shares (claims, due times
 * and dispatches compare with its `now()`), so a role on a host whose clock drifted still agrees
 * with the others. A failed measurement keeps the last offset.
 */
@Injectable()
export class ClockSync implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ClockSync.name);
  private readonly job = new PeriodicJob(
    () => this.sync(),
    () => SYNC_INTERVAL_MS,
    (error) => this.logger.warn(`could not measure the clock against Postgres: ${error.message}`),
  );

  constructor(private readonly db: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.sync().catch((error: Error) => this.logger.warn(`could not measure the clock against Postgres: ${error.message}`));
    this.job.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.job.stop();
  }

  /** Measures the offset once and applies it; resolves with it. */
  async sync(): Promise<number> {
    const sentAt = Date.now();
    const [row] = (await this.db.query(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`)) as { ms: number }[];
    const answeredAt = Date.now();
    const offset = Math.round(Number(row.ms) - (sentAt + answeredAt) / 2);
    if (Math.abs(offset - heraldClock.offsetMs()) < NOISE_MS) return heraldClock.offsetMs();
    const applied = Math.abs(offset) < NOISE_MS ? 0 : offset;
    if (Math.abs(applied) >= WARN_MS) {
      this.logger.warn(
        `this host's clock is ${Math.abs(applied) / 1000} s ${applied > 0 ? 'behind' : 'ahead of'} Postgres's; Herald's timestamps follow Postgres's clock`,
      );
    }
    heraldClock.setOffsetMs(applied);
    return applied;
  }
}
