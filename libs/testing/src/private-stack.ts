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

export async function startPrivateStack(): Promise<PrivateStack> {
  const [postgres, redis, nats] = await Promise.all([startPrivatePostgres(), startPrivateRedis(), startPrivateNats()]);
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
