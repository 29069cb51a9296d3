import { HeraldError } from '@herald/core';
import { PlanId } from '@herald/limits';
import { ApiKeyPermission } from './api-key.entity';

/** Who is calling: the authenticated API key and what the request path needs of its team. */
export interface Principal {
  readonly teamId: string;
  readonly keyId: string;
  readonly permission: ApiKeyPermission;
  /** Set only on a sending_access key restricted to one domain. */
  readonly domainId: string | null;
  readonly team: {
    readonly id: string;
    readonly plan: PlanId;
    readonly homeRegion: string;
    /** The team's own requests-per-second override; null means the plan's default. */
    readonly rateLimit: number | null;
  };
}

/**
 * Sending-only keys may call the send endpoints and nothing else, as at Resend. Transports call
 * this on every other endpoint.
 */
export function requireFullAccess(principal: Principal): void {
  if (principal.permission !== 'full_access') {
    throw new HeraldError('restricted_api_key', 'This API key is restricted to only send emails');
  }
}
