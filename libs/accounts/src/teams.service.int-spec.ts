import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { DatabaseModule } from '@herald/database';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { AccountsModule } from './accounts.module';
import { TeamsService } from './teams.service';

/** A real Nest application context on the suite's own migrated schema. */
function start(config: HeraldConfig): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(
    { module: class AccountsTeamsSpec {}, imports: [ConfigModule.forRoot(config), DatabaseModule, AccountsModule] },
    { logger: false },
  );
}

describe('TeamsService (Postgres)', () => {
  let isolated: IsolatedConfig;
  let app: INestApplicationContext;
  let teams: TeamsService;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    app = await start(isolated.config);
    teams = app.get(TeamsService);
  });

  afterAll(async () => {
    await app?.close();
    await isolated?.cleanup();
  });

  it('creates a team with Resend-like defaults and reads it back', async () => {
    const team = await teams.create({ name: 'Acme' });
    expect(team).toMatchObject({ name: 'Acme', homeRegion: 'us-east-1', plan: 'free', rateLimit: null });
    expect(team.createdAt).toBeInstanceOf(Date);
    await expect(teams.get(team.id)).resolves.toEqual(team);
  });

  it('keeps an explicit region, plan and rate limit', async () => {
    const team = await teams.create({ name: 'Globex', region: 'eu-west-1', plan: 'scale-1.5m', rateLimit: 50 });
    await expect(teams.get(team.id)).resolves.toMatchObject({ homeRegion: 'eu-west-1', plan: 'scale-1.5m', rateLimit: 50 });
  });

  it('defaults to the first configured region when us-east-1 is not offered', async () => {
    const other = await start({ ...isolated.config, HERALD_REGION: 'sa-east-1', HERALD_REGIONS: ['sa-east-1', 'eu-west-1'] });
    try {
      await expect(other.get(TeamsService).create({ name: 'Initech' })).resolves.toMatchObject({ homeRegion: 'sa-east-1' });
      await expect(other.get(TeamsService).create({ name: 'Initech', region: 'us-east-1' })).rejects.toMatchObject({
        code: 'invalid_region',
      });
    } finally {
      await other.close();
    }
  });

  it('rejects a region that is not configured', async () => {
    await expect(teams.create({ name: 'Acme', region: 'mars-north-1' })).rejects.toMatchObject({
      code: 'invalid_region',
      message: 'The `region` field must be one of: us-east-1, eu-west-1, sa-east-1, ap-northeast-1.',
    });
  });

  it('rejects an unknown plan', async () => {
    await expect(teams.create({ name: 'Acme', plan: 'enterprise' })).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('validates the name and the rate limit', async () => {
    await expect(teams.create({} as never)).rejects.toMatchObject({ code: 'missing_required_field' });
    await expect(teams.create({ name: '   ' })).rejects.toMatchObject({ code: 'missing_required_field' });
    await expect(teams.create({ name: 'x'.repeat(101) })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(teams.create({ name: 'Acme', rateLimit: 0 })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(teams.create({ name: 'Acme', rateLimit: 1.5 })).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('answers not_found for an unknown or malformed team id', async () => {
    await expect(teams.get('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'not_found' });
    await expect(teams.get('not-a-uuid')).rejects.toMatchObject({ code: 'not_found' });
  });
});
