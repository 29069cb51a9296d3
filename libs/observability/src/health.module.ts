import { Global, Module } from '@nestjs/common';
import { HealthRegistry } from './health.registry';

/** Global so any context module can register its readiness check without importing this lib's module. */
@Global()
@Module({ providers: [HealthRegistry], exports: [HealthRegistry] })
export class HealthModule {}
