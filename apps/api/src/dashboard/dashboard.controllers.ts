import { MeController, RegionsController } from './me.controller';

export { DashboardGuard } from './dashboard.guard';

/** Every controller of /dashboard/api/* (better-auth's routes and /csrf are Fastify routes: auth.route.ts, csrf.ts). */
export const DASHBOARD_CONTROLLERS = [MeController, RegionsController];
