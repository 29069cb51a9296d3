import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { dataSourceOptions } from './data-source';

/** The Postgres connection of a role. Contexts register their entities with forFeature. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [CONFIG],
      useFactory: (config: HeraldConfig) => ({ ...dataSourceOptions(config), autoLoadEntities: true }),
    }),
  ],
})
export class DatabaseModule {}
