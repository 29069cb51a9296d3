import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { OpsServer, roleLogs } from '@herald/observability';
import { startApi } from '../../api/src/api.app';
import { startMetrics } from '../../metrics/src/metrics.app';
import { startSmtp } from '../../smtp/src/smtp.app';
import { startWebhooks } from '../../webhooks/src/webhooks.app';
import { startWorker } from '../../worker/src/worker.app';

export const ROLES = ['api', 'smtp', 'worker', 'webhooks', 'metrics'] as const;
export type RoleName = (typeof ROLES)[number];

export interface Started {
  role: RoleName;
  /** The region it serves (HERALD_REGION of its config). */
  region: string;
  app: INestApplicationContext;
  /** Drains and stops the role; its shutdown lines are written as the role's. */
  close(): Promise<void>;
  /** Where the role can be reached (API base URL, or its ops port). */
  address: string;
  /** Runs `work` as the role: its log lines carry the role. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

/** Starts one role; each is its own Nest application with its own connections and logs. */
export async function startRole(role: RoleName, config: HeraldConfig): Promise<Started> {
  const logs = roleLogs(role, config);
  const logging = { logger: logs.logger };
  const started = (app: INestApplicationContext, close: () => Promise<void>, address: string): Started => ({
    role,
    region: config.HERALD_REGION,
    app,
    close: () => logs.run(close),
    address,
    run: (work) => logs.run(work),
  });
  const context = (app: INestApplicationContext) => started(app, () => app.close(), `ops http://127.0.0.1:${app.get(OpsServer).port()}`);
  switch (role) {
    case 'api': {
      const { app, url, close } = await startApi(config, logging);
      return started(app, close, url);
    }
    case 'smtp':
      return context(await startSmtp(config, logging));
    case 'worker':
      return context(await startWorker(config, logging));
    case 'webhooks':
      return context(await startWebhooks(config, logging));
    case 'metrics':
      return context(await startMetrics(config, logging));
  }
}

/** The roles `herald all` runs once, and the ones it runs for every served region. */
const SHARED_ROLES = ['api', 'smtp'] as const satisfies readonly RoleName[];
const REGIONAL_ROLES = ['worker', 'webhooks', 'metrics'] as const satisfies readonly RoleName[];

/**
 * `herald all`: every role in this one process. The API and the SMTP relay run once (in
 * HERALD_REGION); a worker, a webhooks consumer and a metrics consumer run for every region in HERALD_REGIONS, the
 * regions POST /domains accepts, so no accepted domain's mail waits for a worker that is not
 * running. A region's worker and webhooks connect to NATS_REGION_URLS[region] if set (a local
 * supercluster: their own region's servers), else to NATS_URL. Each role's ops server gets its
 * own port, consecutive from OPS_PORT, so they do not collide.
 */
export async function startAll(config: HeraldConfig): Promise<Started[]> {
  const started: Started[] = [];
  let opsPort = config.OPS_PORT;
  const nextOpsPort = () => (config.OPS_PORT === 0 ? 0 : opsPort++);
  try {
    for (const role of SHARED_ROLES) started.push(await startRole(role, { ...config, OPS_PORT: nextOpsPort() }));
    for (const region of servedRegionsInOrder(config)) {
      const NATS_URL = config.NATS_REGION_URLS[region] ?? config.NATS_URL;
      for (const role of REGIONAL_ROLES) started.push(await startRole(role, { ...config, HERALD_REGION: region, NATS_URL, OPS_PORT: nextOpsPort() }));
    }
  } catch (error) {
    // A role that failed to boot must not leave the others holding connections and ports.
    for (const s of started.reverse()) await s.close().catch(() => undefined);
    throw error;
  }
  return started;
}

/** HERALD_REGIONS with HERALD_REGION first, so the home region's roles come up first. */
export function servedRegionsInOrder(config: Pick<HeraldConfig, 'HERALD_REGION' | 'HERALD_REGIONS'>): string[] {
  return [config.HERALD_REGION, ...config.HERALD_REGIONS.filter((r) => r !== config.HERALD_REGION)];
}
