import { startPrivateNats, type PrivateNats } from './private-nats';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres';
import { startPrivateRedis, type PrivateRedis } from './private-redis';

/** Private Postgres, Redis and NATS for one fault suite (one per test file: a few seconds to start). */
export interface PrivateStack {
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  nats: PrivateNats;
  /** The services' addresses as Herald's config names them. */
  urls: { DATABASE_URL: string; REDIS_URL: string; NATS_URL: string };
  stop(): Promise<void>;
}

export interface PrivateStackOptions {
  /** Where Postgres keeps its data (a `SmallDisk`'s path for the disk-full scenario). */
  postgresDir?: string;
  /** Where NATS keeps its JetStream store. */
  natsDir?: string;
}

export async function startPrivateStack(options: PrivateStackOptions = {}): Promise<PrivateStack> {
  const started = await Promise.allSettled([
    startPrivatePostgres({ parentDir: options.postgresDir }),
    startPrivateRedis(),
    startPrivateNats({ parentDir: options.natsDir }),
  ] as const);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    // The servers that did start must not outlive the failed suite.
    await Promise.allSettled(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
    throw failed.reason;
  }
  const [postgres, redis, nats] = started.map((s) => (s as PromiseFulfilledResult<unknown>).value) as [PrivatePostgres, PrivateRedis, PrivateNats];
  return {
    postgres,
    redis,
    nats,
    urls: { DATABASE_URL: postgres.url, REDIS_URL: redis.url, NATS_URL: nats.url },
    stop: async () => {
      await Promise.allSettled([postgres.stop(), redis.stop(), nats.stop()]);
    },
  };
}
