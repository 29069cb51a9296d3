import { Injectable, Logger as NestLogger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { INestApplicationContext } from '@nestjs/common';
import { ConfigModule, loadConfig } from '@herald/config';
import { InjectPinoLogger, Logger, LoggingModule, PinoLogger } from './index';

// One application per spec file: nestjs-pino keeps its out-of-request logger per process.
const lines: string[] = [];

@Injectable()
class SenderActors implements OnApplicationBootstrap {
  private readonly logger = new NestLogger(SenderActors.name);

  constructor(@InjectPinoLogger('Reconciler') private readonly pino: PinoLogger) {}

  onApplicationBootstrap(): void {
    this.logger.log('actors started');
    this.logger.debug('below the configured level');
    this.pino.info({ overdue: 3 }, 'republished overdue emails');
  }
}

@Module({
  imports: [
    ConfigModule.forRoot(loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'info', HERALD_REGION: 'ap-northeast-1' })),
    LoggingModule.forRole('worker', { destination: { write: (line: string) => void lines.push(line) } }),
  ],
  providers: [SenderActors],
})
class WorkerModule {}

describe('LoggingModule in an application context without HTTP', () => {
  let app: INestApplicationContext;
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    app = await NestFactory.createApplicationContext(WorkerModule, { bufferLogs: true });
    app.useLogger(app.get(Logger));
  });

  afterAll(() => app.close());

  it('writes Nest and injected-logger lines as JSON with role and region', () => {
    expect(records()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: 'worker', region: 'ap-northeast-1', context: 'SenderActors', msg: 'actors started' }),
        expect.objectContaining({ role: 'worker', region: 'ap-northeast-1', context: 'Reconciler', overdue: 3 }),
        // Boot lines logged before the logger existed are replayed through it.
        expect.objectContaining({ role: 'worker', context: 'InstanceLoader' }),
      ]),
    );
    expect(records().every((r) => r.role === 'worker' && r.region === 'ap-northeast-1')).toBe(true);
  });

  it('honours LOG_LEVEL', () => {
    expect(lines.join('')).not.toContain('below the configured level');
  });
});
