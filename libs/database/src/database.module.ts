import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source';
import { ClockSync } from './clock-sync';
import { PostgresHealth } from './postgres.health';
import { DATABASE_CONFIG, DatabaseConfig } from './database.config';

/** The Postgres connection of a role, and Herald's clock kept on Postgres's. Contexts register their entities with forFeature. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      extraProviders: [DATABASE_CONFIG.provider],
      inject: [DATABASE_CONFIG.token],
      useFactory: (config: DatabaseConfig) => ({ ...dataSourceOptions(config), autoLoadEntities: true }),
    }),
  ],
  providers: [PostgresHealth, ClockSync],
  exports: [PostgresHealth, ClockSync],
})
export class DatabaseModule {}
