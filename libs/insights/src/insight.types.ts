import type { MessageScan } from './message-scan';

/** `attention`: likely to hurt delivery or placement now; `improvement`: worth doing. */
export type InsightSeverity = 'attention' | 'improvement';

/** One finding about one email: what was found (with the measured value) and how to fix it. */
export interface Insight {
  id: string;
  severity: InsightSeverity;
  found: string;
  fix: string;
}

/** The email as the content rules read it. */
export interface ReviewedEmail {
  /** The bare sender address, e.g. `hello@acme.com`. */
  fromAddress: string;
  /** Lowercased ASCII domain of the sender. */
  fromDomain: string;
  /** Bare recipient addresses (to, cc and bcc), each once. */
  recipients: string[];
  subject: string;
  html: string | null;
  text: string | null;
  /** Header names lowercased. */
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
}

/** The sending domain's settings that the rules read. */
export interface SendingDomainFacts {
  name: string;
  openTracking: boolean;
  clickTracking: boolean;
  /** `links.acme.com`, or null when the domain has no tracking subdomain. */
  trackingHost: string | null;
  /** Its CNAME verified: only then does tracking take effect. */
  trackingVerified: boolean;
}

/** What DNS says of the sending domain's DMARC: the record that applies (its own or its organization's). */
export type DmarcFacts =
  | { kind: 'found'; record: string; policy: 'none' | 'quarantine' | 'reject' | null }
  | { kind: 'missing' }
  /** DNS gave no answer: the DMARC rules say nothing rather than guess. */
  | { kind: 'unknown' };

/** A recipient's earlier trouble: an entry on the suppression list, or an earlier bounce. */
export interface RecipientHistory {
  address: string;
  kind: 'suppressed' | 'bounced';
  /** For `suppressed`: bounce, complaint or manual. */
  origin: string | null;
  at: Date;
  detail: string | null;
}

/** Everything a content rule may read. */
export interface ContentFacts {
  email: ReviewedEmail;
  scan: MessageScan;
  /** Null when the team has no domain of that name (it was deleted since). */
  domain: SendingDomainFacts | null;
  dmarc: DmarcFacts;
  history: RecipientHistory[];
}

/** An event of the email, as the outcome rules read it. */
export interface OutcomeEvent {
  type: string;
  recipients: string[];
  data: Record<string, unknown>;
  createdAt: Date;
}

/** A recipient's delivery state (the last reply and the MX host that gave it). */
export interface RecipientState {
  address: string;
  status: string;
  lastResponse: string | null;
}

export interface OutcomeFacts {
  events: OutcomeEvent[];
  recipients: RecipientState[];
}

/** A rule: a pure function of the facts, with its own id. */
export interface Rule<F> {
  id: string;
  check(facts: F): Omit<Insight, 'id'> | null;
}
