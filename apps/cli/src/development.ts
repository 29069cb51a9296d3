import { INestApplicationContext } from '@nestjs/common';
import { ApiKeysService, TeamsService } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { DashboardAuth, PeopleService, SystemMailer } from '@herald/people';

export interface DevelopmentSetup {
  teamId: string;
  token: string;
  from: string;
  /** The dashboard's development user: an owner of the Development team. */
  user: { email: string; password: string };
}

/** Printed by `herald all`; config refuses DEV_BOOTSTRAP in production, so no deployed Herald has this user. */
const DEVELOPMENT_PASSWORD = 'herald-development';

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
  const people = app.get(PeopleService);
  const name = `dev.${config.MAIL_DOMAIN}`;
  const email = `dev@${name}`;
  // The user first, so that the team signing up makes for them is the Development team itself: the
  // dashboard opens on it, not on an empty team of their own.
  let userId = await people.userIdByEmail(email);
  let team = await teams.findByName('Development');
  if (!userId) userId = await app.get(DashboardAuth).signUp(email, DEVELOPMENT_PASSWORD, 'Developer', team ? undefined : 'Development');
  team ??= (await teams.findByName('Development')) ?? (await teams.create({ name: 'Development' }));
  const existing = await repository.findByName(team.id, name);
  // In HERALD_REGION when the team's home region is not served by this run (`herald all --regions`).
  const body = { name, ...(!config.HERALD_REGIONS.includes(team.homeRegion) && { region: config.HERALD_REGION }) };
  const id = existing?.id ?? (await app.get(DomainsService).create({ teamId: team.id, homeRegion: team.homeRegion }, body)).id;
  const domain = (await repository.getById(id))!;
  if (domain.status !== 'verified') await markVerified(repository, id);
  const { token } = await app.get(ApiKeysService).create(team.id, { name: `Development key ${new Date().toISOString()}` });
  // The dashboard's own mail (verification, invitations) leaves from MAIL_DOMAIN: on a laptop it is verified like the dev domain.
  const system = await app.get(SystemMailer).systemSender();
  if ((await repository.getById(system.domainId))?.status !== 'verified') await markVerified(repository, system.domainId);
  await people.adoptDevelopmentUser(userId, team.id);
  return { teamId: team.id, token, from: `hello@${name}`, user: { email, password: DEVELOPMENT_PASSWORD } };
}

async function markVerified(repository: DomainsRepository, id: string): Promise<void> {
  const domain = (await repository.getById(id))!;
  await repository.saveVerification(id, {
    status: 'verified',
    records: domain.records.map((r) => ({ ...r, status: 'verified' as const })),
    dmarc: null,
    dkimStatuses: {},
    verifiedAt: new Date(),
    nextCheckAt: null,
  });
}
