import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source';
import { ClockSync } from './clock-sync';
import { PostgresHealth } from './postgres.health';
import { DATABASE_CONFIG, DatabaseConfig } from './database.config';
import { EmailPlanes } from './email-planes';

/**
 * The Postgres connections of a role, and Herald's clock kept on Postgres's. TypeORM's DataSource
 * is the control plane's database (`CONTROL_DATABASE_URL`, else `DATABASE_URL`); EmailPlanes
 * holds each served region's email plane (planes.ts). Contexts register their entities with
 * forFeature. Global, as TypeORM's DataSource is: every repository may reach either plane.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      extraProviders: [DATABASE_CONFIG.provider],
      inject: [DATABASE_CONFIG.token],
      useFactory: (config: DatabaseConfig) => ({ ...dataSourceOptions(controlPlane(config)), autoLoadEntities: true }),
    }),
  ],
  providers: [DATABASE_CONFIG.provider, PostgresHealth, ClockSync, EmailPlanes],
  exports: [PostgresHealth, ClockSync, EmailPlanes],
})
export class DatabaseModule {}

/** The configuration with the control plane's database as its DATABASE_URL. */
function controlPlane(config: DatabaseConfig): DatabaseConfig {
  return { ...config, DATABASE_URL: config.CONTROL_DATABASE_URL ?? config.DATABASE_URL };
}
