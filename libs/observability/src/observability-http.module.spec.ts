import { Controller, Get, Module, OnModuleInit, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigModule, loadConfig } from '@herald/config';
import { Registry } from 'prom-client';
import {
  HealthRegistry,
  installHttpMetrics,
  Logger,
  METRICS_REGISTRY,
  MetricsService,
  ObservabilityHttpModule,
  ObservabilityModule,
  requestIdOptions,
} from './index';

/** What the fake Redis check does on the next probe. */
let redis: 'up' | 'down' | 'hang' = 'up';
const lines: string[] = [];

@Controller('emails')
class EmailsController {
  @Get(':id')
  get(@Param('id') id: string): { id: string } {
    return { id };
  }
}

@Module({ controllers: [EmailsController] })
class FakeContextModule implements OnModuleInit {
  constructor(private readonly health: HealthRegistry) {}

  onModuleInit(): void {
    this.health.register('postgres', async () => undefined);
    this.health.register('redis', () => (redis === 'hang' ? new Promise(() => undefined) : Promise.resolve(redis === 'up')), {
      timeoutMs: 100,
    });
  }
}

@Module({
  imports: [
    ConfigModule.forRoot(loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'info', HERALD_REGION: 'eu-west-1' })),
    ObservabilityModule.forRole('api', { destination: { write: (line: string) => void lines.push(line) } }),
    ObservabilityHttpModule,
    FakeContextModule,
  ],
})
class ApiModule {}

describe('ObservabilityHttpModule on a Fastify application', () => {
  let app: NestFastifyApplication;
  const get = (url: string, headers: Record<string, string> = {}) => app.getHttpAdapter().getInstance().inject({ method: 'GET', url, headers });
  const scrape = () => app.get<Registry>(METRICS_REGISTRY).metrics();
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(ApiModule, new FastifyAdapter(requestIdOptions), {
      bufferLogs: true,
    });
    app.useLogger(app.get(Logger));
    // `listen()` would flush the boot lines held until the logger exists; `inject()` needs no listen.
    app.flushLogs();
    installHttpMetrics(app.getHttpAdapter().getInstance(), app.get(MetricsService));
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(() => app.close());

  beforeEach(() => {
    redis = 'up';
    lines.length = 0;
  });

  it('is live', async () => {
    const res = await get('/health/live');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('is ready when every check passes', async () => {
    const res = await get('/health/ready');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', checks: { postgres: 'up', redis: 'up' } });
  });

  it('answers 503 naming the failing check', async () => {
    redis = 'down';
    const res = await get('/health/ready');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'unavailable', checks: { postgres: 'up', redis: 'down' } });
  });

  it('answers 503 within the timeout when a check hangs', async () => {
    redis = 'hang';
    const started = Date.now();
    const res = await get('/health/ready');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'unavailable', checks: { postgres: 'up', redis: 'down' } });
  });

  it('collects Node metrics labelled by role and region', async () => {
    const body = await scrape();
    expect(body).toMatch(/^process_resident_memory_bytes\{role="api",region="eu-west-1"\} \d+/m);
    expect(body).toMatch(/^nodejs_heap_size_used_bytes\{role="api",region="eu-west-1"\} \d+/m);
  });

  it('records request durations by route pattern, not by URL', async () => {
    await get('/emails/0b1c2d');
    await get('/emails/3e4f5a');
    await get('/no/such/route');
    const body = await scrape();
    expect(body).toContain('# TYPE herald_http_request_duration_seconds histogram');
    expect(body).toMatch(
      /^herald_http_request_duration_seconds_count\{role="api",region="eu-west-1",method="GET",route="\/emails\/:id",status="200"\} 2$/m,
    );
    expect(body).toMatch(/^herald_http_request_duration_seconds_count\{.*route="unmatched",status="404"\} 1$/m);
    expect(body).not.toContain('0b1c2d');
  });

  it('logs each request as one JSON line with role, region and request id, without credentials', async () => {
    await get('/emails/abc', { authorization: 'Bearer re_secret_key', cookie: 'session=s3cr3t', 'x-request-id': 'req-42' });
    expect(lines.every((line) => line.endsWith('\n') && !line.slice(0, -1).includes('\n'))).toBe(true);
    const completed = records().filter((r) => r.msg === 'request completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({
      role: 'api',
      region: 'eu-west-1',
      reqId: 'req-42',
      req: { method: 'GET', url: '/emails/abc', headers: { authorization: '[redacted]', cookie: '[redacted]' } },
      res: { statusCode: 200 },
    });
    expect(lines.join('')).not.toMatch(/re_secret_key|s3cr3t/);
  });

  it('makes up a request id when the caller sends none or an unusable one', async () => {
    await get('/emails/abc');
    await get('/emails/abc', { 'x-request-id': 'a'.repeat(500) });
    const ids = records().map((r) => r.reqId);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps probes and scrapes out of the request log', async () => {
    await get('/health/live');
    await get('/health/ready');
    expect(records().filter((r) => r.msg === 'request completed')).toEqual([]);
  });

  it('keeps /metrics off the HTTP server of the role (the public API port): operators scrape the ops port', async () => {
    expect((await get('/metrics')).statusCode).toBe(404);
  });
});
