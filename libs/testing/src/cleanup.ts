import { createClient } from 'redis';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { HeraldConfig } from '@herald/config';

export async function purgeRedisPrefix(config: HeraldConfig): Promise<void> {
  const redis = createClient({ url: config.REDIS_URL });
  await redis.connect();
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanIterator({ MATCH: `${config.REDIS_PREFIX}*`, COUNT: 1000 })) keys.push(...batch);
    for (let i = 0; i < keys.length; i += 500) await redis.del(keys.slice(i, i + 500));
  } finally {
    await redis.quit();
  }
}

export async function deleteNamespaceStreams(config: HeraldConfig): Promise<void> {
  const nc = await connect({ servers: config.NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = `${config.NATS_NAMESPACE.toUpperCase()}_`;
    for await (const stream of jsm.streams.list()) {
      if (stream.config.name.startsWith(prefix)) await jsm.streams.delete(stream.config.name);
    }
  } finally {
    await nc.close();
  }
}
