import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AccountsModule, ApiKeysService, TeamsService } from '@herald/accounts';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { restTimestamp } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import { requireFlag } from './args';

@Module({ imports: [DatabaseModule, AccountsModule] })
class AccountsCliModule {}

async function withAccounts<T>(config: HeraldConfig, run: (teams: TeamsService, keys: ApiKeysService) => Promise<T>): Promise<T> {
  const app = await NestFactory.createApplicationContext({ module: AccountsCliModule, imports: [ConfigModule.forRoot(config)] }, { logger: false });
  try {
    return await run(app.get(TeamsService), app.get(ApiKeysService));
  } finally {
    await app.close();
  }
}

/** `herald team create --name N [--region R] [--plan P] [--rate-limit N]` */
export function createTeam(config: HeraldConfig, flags: Record<string, string>) {
  return withAccounts(config, async (teams) => {
    const team = await teams.create({
      name: requireFlag(flags, 'name'),
      region: flags.region,
      plan: flags.plan,
      rateLimit: flags['rate-limit'] !== undefined ? Number(flags['rate-limit']) : null,
    });
    return {
      id: team.id,
      object: 'team',
      name: team.name,
      region: team.homeRegion,
      plan: team.plan,
      rate_limit: team.rateLimit,
      created_at: restTimestamp(team.createdAt),
    };
  });
}

/** `herald key create --team ID [--permission P] [--name N]`; the token is printed once. */
export function createKey(config: HeraldConfig, flags: Record<string, string>) {
  return withAccounts(config, async (teams, keys) => {
    const team = await teams.get(requireFlag(flags, 'team'));
    const { id, token } = await keys.create(team.id, {
      name: flags.name ?? 'Operator key',
      permission: flags.permission,
      domain_id: flags['domain-id'],
    });
    return { id, object: 'api_key', team_id: team.id, permission: flags.permission ?? 'full_access', token };
  });
}
