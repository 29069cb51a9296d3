import type { FactoryProvider } from '@nestjs/common';
import type { HeraldConfig } from './config.schema';
import { CONFIG } from './config.module';

/**
 * The part of the configuration one lib reads, declared by that lib: its provider hands the lib
 * a frozen copy of those keys alone, typed as such, so reading another lib's variable is a type
 * error and what a lib depends on is listed in one place. The whole config stays validated once
 * at boot (config.schema.ts); the slice only narrows what each lib sees.
 */
export interface ConfigSlice<K extends keyof HeraldConfig> {
  /** Inject with `@Inject(SLICE.token)`. */
  readonly token: symbol;
  readonly keys: readonly K[];
  /** List it in the lib's module providers. */
  readonly provider: FactoryProvider<SliceOf<ConfigSlice<K>>>;
}

export type SliceOf<S> = S extends ConfigSlice<infer K> ? Readonly<Pick<HeraldConfig, K>> : never;

export function configSlice<const K extends keyof HeraldConfig>(name: string, keys: readonly K[]): ConfigSlice<K> {
  const token = Symbol(`HERALD_CONFIG:${name}`);
  return {
    token,
    keys,
    provider: { provide: token, inject: [CONFIG], useFactory: (config: HeraldConfig) => pick(config, keys) },
  };
}

/** For code outside Nest (tests, scripts) that builds a lib's class by hand. */
export function pick<K extends keyof HeraldConfig>(config: HeraldConfig, keys: readonly K[]): Readonly<Pick<HeraldConfig, K>> {
  return Object.freeze(Object.fromEntries(keys.map((key) => [key, config[key]])) as Pick<HeraldConfig, K>);
}
