import { INestApplicationContext } from '@nestjs/common';
import { ApiKeysService, TeamsService } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { DomainsRepository, DomainsService } from '@herald/domains';

export interface DevelopmentSetup {
  teamId: string;
  token: string;
  from: string;
}

/**
 * `herald all` on a developer's machine: the "Development" team (reused across restarts), a
 * fresh full-access key, and a sending domain under Herald's own MAIL_DOMAIN
 * (`dev.<MAIL_DOMAIN>`), marked verified without a DNS check because no public DNS points at a
 * laptop. It is the local counterpart of Resend's onboarding domain; config refuses
 * DEV_BOOTSTRAP in production, so no deployed Herald has such a domain. `app` is the API role's.
 */
export async function developmentSetup(config: HeraldConfig, app: INestApplicationContext): Promise<DevelopmentSetup> {
  const teams = app.get(TeamsService);
  const repository = app.get(DomainsRepository);
  const team = (await teams.findByName('Development')) ?? (await teams.create({ name: 'Development' }));
  const name = `dev.${config.MAIL_DOMAIN}`;
  const existing = await repository.findByName(team.id, name);
  // In HERALD_REGION when the team's home region is not served by this run (`herald all --regions`).
  const body = { name, ...(!config.HERALD_REGIONS.includes(team.homeRegion) && { region: config.HERALD_REGION }) };
  const id = existing?.id ?? (await app.get(DomainsService).create({ teamId: team.id, homeRegion: team.homeRegion }, body)).id;
  const domain = (await repository.getById(id))!;
  if (domain.status !== 'verified') {
    await repository.saveVerification(id, {
      status: 'verified',
      records: domain.records.map((r) => ({ ...r, status: 'verified' as const })),
      dmarc: null,
      dkimStatuses: {},
      verifiedAt: new Date(),
      nextCheckAt: null,
    });
  }
  const { token } = await app.get(ApiKeysService).create(team.id, { name: `Development key ${new Date().toISOString()}` });
  return { teamId: team.id, token, from: `hello@${name}` };
}
