/** Resend's domain statuses. */
export type DomainStatus = 'not_started' | 'pending' | 'verified' | 'partially_verified' | 'partially_failed' | 'failed' | 'temporary_failure';

/** Resend's per-record statuses. */
export type RecordStatus = 'not_started' | 'pending' | 'verified' | 'failed' | 'temporary_failure';

export type DomainTls = 'opportunistic' | 'enforced';

export type DkimAlgorithm = 'rsa-sha256' | 'ed25519-sha256';

/**
 * pending: published for verification, not signing yet; active: signs mail; retiring: replaced,
 * still in DNS until mail signed with it has been checked; retired: gone.
 */
export type DkimKeyState = 'pending' | 'active' | 'retiring' | 'retired';

/** What a record is for, as Resend labels it (`DMARC` is Herald's recommended extra). */
export type RecordPurpose = 'DKIM' | 'SPF' | 'DMARC' | 'Tracking';

/** One DNS record Herald asks the customer to publish, with what verification last saw. */
export interface DomainRecord {
  record: RecordPurpose;
  /** Relative to the domain, as Resend shows it: `herald1._domainkey`, `send`, `_dmarc`. */
  name: string;
  type: 'TXT' | 'MX' | 'CNAME';
  value: string;
  ttl: 'Auto';
  priority?: number;
  status: RecordStatus;
  /** DKIM and SPF must verify for the domain to send; DMARC and Tracking are recommended. */
  required: boolean;
  /** For DKIM records: the key this record publishes. */
  dkimKeyId?: string;
  /** What DNS answered at the last check (for operators: `herald domain verify`). */
  observed?: string[];
  /** Why the record did not verify, when it did not. */
  problem?: string;
}

/** What verification found about DMARC (reported, never required). */
export interface DmarcReport {
  present: boolean;
  record: string | null;
  policy: 'none' | 'quarantine' | 'reject' | null;
  /** Whether mail from this domain would align: DKIM d= and the Return-Path domain vs From. */
  dkimAligned: boolean;
  spfAligned: boolean;
  checkedAt: string;
}

/** Why the reputation guardrail paused a domain's new sends, as it measured it. */
export interface DomainPause {
  reason: 'bounce_rate' | 'complaint_rate';
  /** The measured rate (0.063 is 6.3%) and the limit it passed. */
  rate: number;
  threshold: number;
  /** Recipients sent to in the window, the rate's volume. */
  sent: number;
  windowHours: number;
}

export interface Domain {
  id: string;
  teamId: string;
  name: string;
  region: string;
  status: DomainStatus;
  customReturnPath: string;
  openTracking: boolean;
  clickTracking: boolean;
  trackingSubdomain: string | null;
  tls: DomainTls;
  records: DomainRecord[];
  dmarc: DmarcReport | null;
  verificationStartedAt: Date | null;
  verifiedAt: Date | null;
  lastCheckedAt: Date | null;
  nextCheckAt: Date | null;
  createdAt: Date;
  /** Set while the guardrail holds new sends (see domain-pause.ts); an owner's resume clears it. */
  pausedAt: Date | null;
  pause: DomainPause | null;
  resumedAt: Date | null;
}

export interface DkimKey {
  id: string;
  domainId: string;
  selector: string;
  algorithm: DkimAlgorithm;
  /** The `p=` value: base64 of the DER SubjectPublicKeyInfo (RSA) or of the raw 32 bytes (Ed25519). */
  publicKey: string;
  /** Encrypted at rest (see dkim-key.crypto.ts); decrypt only to sign. */
  privateKeyEncrypted: Buffer;
  state: DkimKeyState;
  dnsStatus: RecordStatus;
  createdAt: Date;
  activatedAt: Date | null;
  retiredAt: Date | null;
}
