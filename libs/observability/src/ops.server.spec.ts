import { INestApplicationContext, Logger as NestLogger, Module, OnModuleInit } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, loadConfig } from '@herald/config';
import { HealthRegistry, MetricsService, ObservabilityModule, OpsServer, OpsServerModule } from './index';

let nats: boolean;

@Module({})
class FakeBusModule implements OnModuleInit {
  constructor(
    private readonly health: HealthRegistry,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.health.register('nats', async () => nats);
    this.metrics.counter('herald_deliveries_total', 'Delivery attempts.', ['outcome']).inc({ outcome: 'delivered' });
  }
}

function workerModule(opsPort: number) {
  @Module({
    imports: [
      ConfigModule.forRoot(loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', OPS_PORT: String(opsPort) })),
      ObservabilityModule.forRole('worker'),
      OpsServerModule,
      FakeBusModule,
    ],
  })
  class WorkerModule {}
  return WorkerModule;
}

describe('OpsServer', () => {
  let app: INestApplicationContext;
  let base: string;

  beforeAll(async () => {
    NestLogger.overrideLogger(false);
    app = await NestFactory.createApplicationContext(workerModule(0));
    base = `http://127.0.0.1:${app.get(OpsServer).port()}`;
  });

  afterAll(async () => {
    await app.close();
    NestLogger.overrideLogger(true);
  });

  beforeEach(() => (nats = true));

  it('listens on a random port when OPS_PORT is 0', () => {
    expect(app.get(OpsServer).port()).toBeGreaterThan(0);
  });

  it('serves liveness', async () => {
    const res = await fetch(`${base}/health/live`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('serves readiness from the role health registry', async () => {
    const up = await fetch(`${base}/health/ready`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ status: 'ok', checks: { nats: 'up' } });
    nats = false;
    const down = await fetch(`${base}/health/ready`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable', checks: { nats: 'down' } });
  });

  it('serves the role metrics registry', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const body = await res.text();
    expect(body).toContain('herald_deliveries_total{outcome="delivered",role="worker",region="us-east-1"} 1');
    expect(body).toMatch(/^process_cpu_user_seconds_total\{role="worker",region="us-east-1"\} /m);
  });

  it('fails the boot of a second role that asks for a port already in use', async () => {
    const port = app.get(OpsServer).port();
    await expect(NestFactory.createApplicationContext(workerModule(port), { abortOnError: false })).rejects.toThrow(
      new RegExp(`^ops server cannot listen on OPS_PORT ${port}: .*EADDRINUSE`),
    );
  });

  it('stops listening when the application closes', async () => {
    const other = await NestFactory.createApplicationContext(workerModule(0));
    const url = `http://127.0.0.1:${other.get(OpsServer).port()}/health/live`;
    expect((await fetch(url)).status).toBe(200);
    await other.close();
    await expect(fetch(url)).rejects.toThrow();
    expect(() => other.get(OpsServer).port()).toThrow('ops server is not listening');
  });
});
