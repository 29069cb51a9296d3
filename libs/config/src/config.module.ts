import { DynamicModule, Global, Module } from '@nestjs/common';
import { HeraldConfig } from './config.schema';
import { loadConfig } from './load-config';

export const CONFIG = Symbol('HERALD_CONFIG');

@Global()
@Module({})
export class ConfigModule {
  /** Provide an already-validated config (tests, the CLI) or validate the environment now. */
  static forRoot(config: HeraldConfig = loadConfig()): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: CONFIG, useValue: config }], exports: [CONFIG] };
  }
}
