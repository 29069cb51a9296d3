import { Test, TestingModule } from '@nestjs/testing';
import type { ModuleMetadata } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BusModule } from '@herald/bus';
import { ResourceEventOutbox } from '@herald/outbox';
import { ConfigModule } from '@herald/config';
import { DatabaseModule } from '@herald/database';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { NatsProbe } from './nats-probe';

/** A module under test on an isolated schema and NATS namespace, with the resource event outbox and a stream probe. */
export interface OutboxWorld {
  isolated: IsolatedConfig;
  moduleRef: TestingModule;
  outbox: ResourceEventOutbox;
  db: DataSource;
  probe: NatsProbe;
  close(): Promise<void>;
}

export async function startOutboxWorld(
  imports: NonNullable<ModuleMetadata['imports']>,
  overrides: Record<string, string> = {},
): Promise<OutboxWorld> {
  const isolated = await isolatedConfig(overrides);
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(isolated.config), DatabaseModule, BusModule, ...imports],
  }).compile();
  await moduleRef.init();
  const probe = await NatsProbe.open(isolated.config);
  return {
    isolated,
    moduleRef,
    outbox: moduleRef.get(ResourceEventOutbox),
    db: moduleRef.get(DataSource),
    probe,
    async close() {
      await probe.close();
      await moduleRef.close();
      await isolated.cleanup();
    },
  };
}
