import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { OpsServer } from '@herald/observability';
import { startApi } from '../../api/src/api.app';
import { startSmtp } from '../../smtp/src/smtp.app';
import { startWebhooks } from '../../webhooks/src/webhooks.app';
import { startWorker } from '../../worker/src/worker.app';

export const ROLES = ['api', 'smtp', 'worker', 'webhooks'] as const;
export type RoleName = (typeof ROLES)[number];

export interface Started {
  role: RoleName;
  close(): Promise<void>;
  /** Where the role can be reached (API base URL, or its ops port). */
  address: string;
}

/** Starts one role; each is its own Nest application with its own connections. */
export async function startRole(role: RoleName, config: HeraldConfig): Promise<Started> {
  switch (role) {
    case 'api': {
      const { url, close } = await startApi(config);
      return { role, close, address: url };
    }
    case 'smtp':
      return context(role, await startSmtp(config));
    case 'worker':
      return context(role, await startWorker(config));
    case 'webhooks':
      return context(role, await startWebhooks(config));
  }
}

function context(role: RoleName, app: INestApplicationContext): Started {
  return { role, close: () => app.close(), address: `ops http://127.0.0.1:${app.get(OpsServer).port()}` };
}

/**
 * `herald all`: every role in this one process. The roles without HTTP get consecutive ops
 * ports after OPS_PORT so they do not collide.
 */
export async function startAll(config: HeraldConfig): Promise<Started[]> {
  const started: Started[] = [];
  let opsPort = config.OPS_PORT;
  for (const role of ROLES) {
    const roleConfig = role === 'api' ? config : { ...config, OPS_PORT: config.OPS_PORT === 0 ? 0 : opsPort++ };
    started.push(await startRole(role, roleConfig));
  }
  return started;
}
