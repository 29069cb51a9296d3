import { Logger } from '@nestjs/common';
import { HealthRegistry } from './health.registry';

describe('HealthRegistry', () => {
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('is ready with no checks', async () => {
    expect(await new HealthRegistry().readiness()).toEqual({ ready: true, body: { status: 'ok', checks: {} } });
  });

  it('counts a check that resolves to nothing or true as up', async () => {
    const health = new HealthRegistry();
    health.register('postgres', async () => undefined);
    health.register('redis', async () => true);
    expect(await health.readiness()).toEqual({ ready: true, body: { status: 'ok', checks: { postgres: 'up', redis: 'up' } } });
  });

  it('names each check that returns false, rejects or throws as down', async () => {
    const health = new HealthRegistry();
    health.register('postgres', async () => undefined);
    health.register('redis', async () => false);
    health.register('nats', () => Promise.reject(new Error('connection refused')));
    health.register('smtp', () => {
      throw new Error('not a promise at all');
    });
    expect(await health.readiness()).toEqual({
      ready: false,
      body: { status: 'unavailable', checks: { postgres: 'up', redis: 'down', nats: 'down', smtp: 'down' } },
    });
  });

  it('reports a failing non-critical check as degraded and stays ready', async () => {
    const health = new HealthRegistry();
    health.register('postgres', async () => undefined);
    health.register('redis', async () => false, { critical: false });
    expect(await health.readiness()).toEqual({ ready: true, body: { status: 'degraded', checks: { postgres: 'up', redis: 'degraded' } } });
    health.register('nats', () => Promise.reject(new Error('connection refused')));
    expect(await health.readiness()).toEqual({
      ready: false,
      body: { status: 'unavailable', checks: { postgres: 'up', redis: 'degraded', nats: 'down' } },
    });
    expect(warn.mock.calls).toEqual([
      ['readiness check "redis" is degraded: returned false'],
      ['readiness check "nats" is down: connection refused'],
    ]);
  });

  it('gives up on a hanging check after its own timeout', async () => {
    const health = new HealthRegistry();
    health.register('redis', () => new Promise(() => undefined), { timeoutMs: 50 });
    const started = Date.now();
    expect((await health.readiness()).body.checks).toEqual({ redis: 'down' });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('gives up on a hanging check after 2 s by default, and not before', async () => {
    jest.useFakeTimers();
    const health = new HealthRegistry();
    health.register('redis', () => new Promise(() => undefined));
    let settled = false;
    const report = health.readiness().finally(() => (settled = true));
    await jest.advanceTimersByTimeAsync(1999);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect((await report).body).toEqual({ status: 'unavailable', checks: { redis: 'down' } });
  });

  it('runs the checks in parallel, so the slowest one bounds the wait', async () => {
    const health = new HealthRegistry();
    for (const name of ['a', 'b', 'c', 'd']) health.register(name, () => new Promise(() => undefined), { timeoutMs: 100 });
    const started = Date.now();
    await health.readiness();
    expect(Date.now() - started).toBeLessThan(350);
  });

  it('logs a check going down and coming back once each, not on every probe', async () => {
    const health = new HealthRegistry();
    let up = false;
    health.register('redis', async () => up);
    await health.readiness();
    await health.readiness();
    up = true;
    await health.readiness();
    await health.readiness();
    expect(warn.mock.calls).toEqual([['readiness check "redis" is down: returned false']]);
    expect(log.mock.calls).toEqual([['readiness check "redis" is up again']]);
  });

  it('refuses a second check under the same name', () => {
    const health = new HealthRegistry();
    health.register('redis', async () => true);
    expect(() => health.register('redis', async () => true)).toThrow('health check "redis" is already registered');
  });
});
