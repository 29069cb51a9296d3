export type Role = 'api' | 'smtp' | 'worker' | 'webhooks' | 'metrics';

export type Dependency = 'postgres' | 'redis' | 'nats';

/**
 * The connections each role opens, and so the ones its readiness checks. Redis serves rate
 * limits, quotas and idempotency, which only the API and the SMTP relay apply.
 */
export const ROLE_NEEDS: Record<Role, readonly Dependency[]> = {
  api: ['postgres', 'redis', 'nats'],
  smtp: ['postgres', 'redis', 'nats'],
  worker: ['postgres', 'nats'],
  webhooks: ['postgres', 'nats'],
  metrics: ['postgres', 'nats'],
};
