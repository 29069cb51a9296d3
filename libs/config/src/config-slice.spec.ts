import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule } from './config.module';
import { configSlice, SliceOf } from './config-slice';
import { loadConfig } from './load-config';

const CLOCK_CONFIG = configSlice('clock', ['HERALD_REGION', 'OPS_PORT']);

@Injectable()
class Clock {
  constructor(@Inject(CLOCK_CONFIG.token) readonly config: SliceOf<typeof CLOCK_CONFIG>) {}

  region(): string {
    // @ts-expect-error API_PORT is not in the clock's slice
    void this.config.API_PORT;
    return this.config.HERALD_REGION;
  }
}

@Module({ providers: [CLOCK_CONFIG.provider, Clock] })
class ClockModule {}

describe('configSlice', () => {
  it('hands a lib a frozen copy of its keys alone', async () => {
    const config = loadConfig({ HERALD_REGION: 'eu-west-1', OPS_PORT: '9465' });
    const module = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config), ClockModule] }).compile();
    const clock = module.get(Clock);
    expect(clock.config).toEqual({ HERALD_REGION: 'eu-west-1', OPS_PORT: 9465 });
    expect(clock.region()).toBe('eu-west-1');
    expect(Object.isFrozen(clock.config)).toBe(true);
    await module.close();
  });
});
