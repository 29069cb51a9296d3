import { MeController, RegionsController, SignInProvidersController } from './me.controller';
import { TeamDomainsController } from './team-domains.controller';
import { TeamEmailsController } from './team-emails.controller';
import { TeamImagesController } from './team-images.controller';
import { TeamAudienceController } from './team-audience.controller';
import { TeamKeysController } from './team-keys.controller';
import { TeamSuppressionsController, TeamWebhooksController } from './team-lists.controller';
import { TeamPeopleController } from './team-people.controller';
import { TeamStatsController } from './team-stats.controller';
import { TeamBroadcastsController } from './team-broadcasts.controller';
import { TeamContactsController } from './team-contacts.controller';

export { DashboardGuard } from './dashboard.guard';

/** Every controller of /dashboard/api/* (better-auth's routes and /csrf are Fastify routes: auth.route.ts, csrf.ts). */
export const DASHBOARD_CONTROLLERS = [
  MeController,
  RegionsController,
  SignInProvidersController,
  TeamDomainsController,
  TeamEmailsController,
  TeamKeysController,
  TeamWebhooksController,
  TeamSuppressionsController,
  TeamPeopleController,
  TeamStatsController,
  TeamBroadcastsController,
  TeamImagesController,
  TeamAudienceController,
  TeamContactsController,
];
