import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { newId } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import { RedisModule, RedisService } from '@herald/redis';
import { IdempotencyModule } from '@herald/idempotency';

/**
 * Test wiring for the integration specs: an application context shaped like a role's (global
 * config, Redis, Postgres, the idempotency module). Each call opens its own Redis client and
 * Postgres pool, so two contexts behave like two API processes sharing Redis and Postgres.
 */
export async function bootIdempotency(config: HeraldConfig): Promise<INestApplicationContext> {
  @Module({ imports: [ConfigModule.forRoot(config), RedisModule, DatabaseModule, IdempotencyModule] })
  class IdempotencyTestRoot {}
  return NestFactory.createApplicationContext(IdempotencyTestRoot, { logger: false });
}

/** Records reference teams, so every test starts by creating one. */
export async function createTeam(dataSource: DataSource): Promise<string> {
  const id = newId();
  await dataSource.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'idempotency', 'us-east-1', 'free')`, [id]);
  return id;
}

/** The Redis keys the registry holds for a team. */
export async function registryKeys(app: INestApplicationContext, teamId: string): Promise<string[]> {
  const redis = app.get(RedisService);
  const keys: string[] = [];
  for await (const batch of redis.client.scanIterator({ MATCH: redis.key('idempotency', teamId, '*'), COUNT: 1000 })) {
    keys.push(...batch);
  }
  return keys;
}

/** Pretends time passed: records created `hours` ago. */
export async function ageRecords(dataSource: DataSource, teamId: string, hours: number): Promise<void> {
  await dataSource.query(`UPDATE idempotency_records SET created_at = now() - $2 * interval '1 hour' WHERE team_id = $1`, [teamId, hours]);
}
