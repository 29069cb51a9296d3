import { heraldClock } from '@herald/core';
import type { DataSource } from 'typeorm';
import { ClockSync } from './clock-sync';

/** A Postgres whose clock is `aheadMs` ahead of this host's. */
const postgresAhead = (aheadMs: number) => ({ query: async () => [{ ms: Date.now() + aheadMs }] }) as unknown as DataSource;

describe('ClockSync', () => {
  afterEach(() => heraldClock.setOffsetMs(0));

  it("puts Herald's clock on Postgres's when the host's is off", async () => {
    const offset = await new ClockSync(postgresAhead(300_000)).sync();
    expect(Math.abs(offset - 300_000)).toBeLessThan(50);
    expect(Math.abs(heraldClock.nowMs() - (Date.now() + 300_000))).toBeLessThan(50);
    await new ClockSync(postgresAhead(-300_000)).sync();
    expect(Math.abs(heraldClock.offsetMs() + 300_000)).toBeLessThan(50);
  });

  it('leaves the clock alone for differences below the noise of a round trip', async () => {
    expect(await new ClockSync(postgresAhead(30)).sync()).toBe(0);
    expect(heraldClock.offsetMs()).toBe(0);
  });

  it('keeps the last offset when Postgres cannot be asked', async () => {
    await new ClockSync(postgresAhead(10_000)).sync();
    const failing = { query: async () => Promise.reject(new Error('Connection terminated unexpectedly')) } as unknown as DataSource;
    await expect(new ClockSync(failing).sync()).rejects.toThrow('Connection terminated');
    expect(Math.abs(heraldClock.offsetMs() - 10_000)).toBeLessThan(50);
  });
});
