import type { Domain } from '@herald/domains';
import { listUnsubscribeUrls, TrackedHtml } from './tracked-html';
import { MAX_TRACKED_URL_BYTES, TrackingKeys } from './tracking-token';

/** What of a domain decides tracking. */
export type TrackingDomain = Pick<Domain, 'openTracking' | 'clickTracking' | 'trackingSubdomain' | 'records' | 'name'>;

/** The tracking a domain's emails get now: which kinds, on which host; null for none. */
export interface EffectiveTracking {
  open: boolean;
  click: boolean;
  /** The tracking subdomain's full name, e.g. `links.acme.com`. */
  host: string;
}

/**
 * API.md §13: open and click tracking take effect only once the domain's tracking subdomain has
 * a verified CNAME (a record that went missing since, `temporary_failure`, keeps links working
 * while it is checked again).
 */
export function effectiveTracking(domain: TrackingDomain): EffectiveTracking | null {
  if (!domain.trackingSubdomain || (!domain.openTracking && !domain.clickTracking)) return null;
  const record = domain.records.find((r) => r.record === 'Tracking' && r.name === domain.trackingSubdomain);
  if (record?.status !== 'verified' && record?.status !== 'temporary_failure') return null;
  return { open: domain.openTracking, click: domain.clickTracking, host: `${domain.trackingSubdomain}.${domain.name}` };
}

export interface TrackedEmail {
  id: string;
  html: string | null;
  headers: Record<string, string> | null;
}

/** Renders one recipient's html: its own signed links and pixel. */
export type RecipientHtml = (position: number, signedAt: Date) => string;

/**
 * The worker's side of tracking: an email's html with each http(s) link turned into a signed
 * redirect through the domain's tracking host and a 1×1 pixel added, per recipient (tokens name
 * the recipient). The html is scanned once per email; each recipient costs a join and one HMAC
 * per link. The text part is never touched.
 */
export class TrackingLinks {
  constructor(
    private readonly keys: TrackingKeys,
    private readonly url: { protocol: 'http' | 'https'; port?: number },
  ) {}

  /** The html of each recipient, or null when the email is not tracked (no html, or tracking off). */
  prepare(tracking: EffectiveTracking | null, email: TrackedEmail): RecipientHtml | null {
    if (!tracking || email.html === null) return null;
    const html = TrackedHtml.parse(email.html, listUnsubscribeUrls(headerValue(email.headers, 'list-unsubscribe')));
    if (!tracking.open && !html.links.length) return null;
    const base = `${this.url.protocol}://${tracking.host}${this.url.port === undefined ? '' : `:${this.url.port}`}`;
    return (position, signedAt) => {
      const click = tracking.click
        ? (link: number, url: string) =>
            Buffer.byteLength(url) > MAX_TRACKED_URL_BYTES
              ? null
              : `${base}/t/c/${this.keys.sign({ kind: 'click', emailId: email.id, position, signedAt, link, url })}`
        : null;
      const pixel = tracking.open ? `${base}/t/o/${this.keys.sign({ kind: 'open', emailId: email.id, position, signedAt })}` : null;
      return html.render(click, pixel);
    };
  }
}

function headerValue(headers: Record<string, string> | null, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}
