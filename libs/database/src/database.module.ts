import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { dataSourceOptions } from './data-source';
import { PostgresHealth } from './postgres.health';

/** The Postgres connection of a role. Contexts register their entities with forFeature. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [CONFIG],
      useFactory: (config: HeraldConfig) => ({ ...dataSourceOptions(config), autoLoadEntities: true }),
    }),
  ],
  providers: [PostgresHealth],
  exports: [PostgresHealth],
})
export class DatabaseModule {}
