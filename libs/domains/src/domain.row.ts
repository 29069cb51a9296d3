import type { DkimKey, DkimKeyState, DmarcReport, Domain, DomainPause, DomainRecord, DomainStatus, DomainTls, RecordStatus } from './domain.types';

/** A row of `domains`, as the repositories read it (DOMAIN_COLUMNS). */
export interface DomainRow {
  id: string;
  team_id: string;
  name: string;
  region: string;
  status: DomainStatus;
  custom_return_path: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
  tls: DomainTls;
  records: DomainRecord[];
  dmarc: DmarcReport | null;
  verification_started_at: Date | null;
  verified_at: Date | null;
  last_checked_at: Date | null;
  next_check_at: Date | null;
  created_at: Date;
  paused_at: Date | null;
  pause: DomainPause | null;
  resumed_at: Date | null;
}

/** A row of `dkim_keys`. */
export interface DkimKeyRow {
  id: string;
  domain_id: string;
  selector: string;
  algorithm: DkimKey['algorithm'];
  public_key: string;
  private_key: Buffer;
  state: DkimKeyState;
  dns_status: RecordStatus;
  created_at: Date;
  activated_at: Date | null;
  retired_at: Date | null;
}

export const DOMAIN_COLUMNS = `id, team_id, name, region, status, custom_return_path, open_tracking, click_tracking, tracking_subdomain,
  tls, records, dmarc, verification_started_at, verified_at, last_checked_at, next_check_at, created_at, paused_at, pause, resumed_at`;

export function toDomain(r: DomainRow): Domain {
  return {
    id: r.id,
    teamId: r.team_id,
    name: r.name,
    region: r.region,
    status: r.status,
    customReturnPath: r.custom_return_path,
    openTracking: r.open_tracking,
    clickTracking: r.click_tracking,
    trackingSubdomain: r.tracking_subdomain,
    tls: r.tls,
    records: r.records,
    dmarc: r.dmarc,
    verificationStartedAt: r.verification_started_at,
    verifiedAt: r.verified_at,
    lastCheckedAt: r.last_checked_at,
    nextCheckAt: r.next_check_at,
    createdAt: r.created_at,
    pausedAt: r.paused_at,
    pause: r.paused_at ? r.pause : null,
    resumedAt: r.resumed_at,
  };
}

export function toKey(r: DkimKeyRow): DkimKey {
  return {
    id: r.id,
    domainId: r.domain_id,
    selector: r.selector,
    algorithm: r.algorithm,
    publicKey: r.public_key,
    privateKeyEncrypted: r.private_key,
    state: r.state,
    dnsStatus: r.dns_status,
    createdAt: r.created_at,
    activatedAt: r.activated_at,
    retiredAt: r.retired_at,
  };
}
