import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { createClient, RedisClientType } from 'redis';
import { CONFIG, HeraldConfig } from '@herald/config';

/**
 * The role's Redis connection (node-redis). Every key Herald writes goes through `key()`, so a
 * deployment or a test run can keep its keys under a prefix of its own.
 */
@Injectable()
export class RedisService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RedisService.name);
  readonly client: RedisClientType;

  constructor(@Inject(CONFIG) private readonly config: HeraldConfig) {
    this.client = createClient({
      url: config.REDIS_URL,
      socket: { reconnectStrategy: (retries) => Math.min(retries * 100, 2000), connectTimeout: 5000 },
    });
    this.client.on('error', (err: Error) => this.logger.warn(`redis: ${err.message}`));
  }

  key(...parts: string[]): string {
    return this.config.REDIS_PREFIX + parts.join(':');
  }

  async onModuleInit(): Promise<void> {
    await this.client.connect();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.client.isOpen) await this.client.close();
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()) === 'PONG';
  }
}
