import type { Principal } from '@herald/accounts';
import type { PlanId } from '@herald/limits';
import type { NewEmail } from '@herald/messages';
import type { NormalizedEmail } from './validation';

export type { EmailEvent, EmailRecord, EmailSource, EmailSummary } from '@herald/messages';

/** An email the send path accepted, as it hands it to the store. */
export type AcceptedEmail = NewEmail<NormalizedEmail>;

/** Who is sending: the authenticated team, as the send path needs it. */
export interface Sender {
  teamId: string;
  plan: PlanId;
  homeRegion: string;
  /** A key restricted to one sending domain (`sending_access` with `domain_id`). */
  restrictedDomainId: string | null;
  /** The API key the request authenticated with, recorded on each email; null for Herald's own mail. */
  apiKeyId: string | null;
}

/** The sender an API key authenticates, over REST or SMTP. */
export function senderOf(principal: Principal): Sender {
  return {
    teamId: principal.teamId,
    plan: principal.team.plan,
    homeRegion: principal.team.homeRegion,
    restrictedDomainId: principal.domainId,
    apiKeyId: principal.keyId,
  };
}
