import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { OpsServer, roleLogs } from '@herald/observability';
import { startApi } from '../../api/src/api.app';
import { startSmtp } from '../../smtp/src/smtp.app';
import { startWebhooks } from '../../webhooks/src/webhooks.app';
import { startWorker } from '../../worker/src/worker.app';

export const ROLES = ['api', 'smtp', 'worker', 'webhooks'] as const;
export type RoleName = (typeof ROLES)[number];

export interface Started {
  role: RoleName;
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
  }
}

/**
 * `herald all`: every role in this one process. Each role's ops server gets its own port,
 * consecutive from OPS_PORT, so they do not collide.
 */
export async function startAll(config: HeraldConfig): Promise<Started[]> {
  const started: Started[] = [];
  let opsPort = config.OPS_PORT;
  for (const role of ROLES) {
    const roleConfig = { ...config, OPS_PORT: config.OPS_PORT === 0 ? 0 : opsPort++ };
    started.push(await startRole(role, roleConfig));
  }
  return started;
}
