import { addressDomain, parseAddress } from '@herald/core';
import type { Domain } from '@herald/domains';
import type { EmailRecord } from '@herald/messages';
import type { ReviewedEmail, SendingDomainFacts } from './insight.types';

const bare = (value: string): string => parseAddress(value)?.address ?? value.trim();

/**
 * The email as the content rules read it. `mimeHeaders` are the header block of a message relayed
 * over SMTP (its custom headers live there, not in the record).
 */
export function reviewedEmail(record: EmailRecord, mimeHeaders: Record<string, string> = {}): ReviewedEmail {
  const fromAddress = bare(record.from);
  const seen = new Set<string>();
  const recipients = [...record.to, ...(record.cc ?? []), ...(record.bcc ?? [])].map(bare).filter((address) => {
    const key = address.toLowerCase();
    return !seen.has(key) && seen.add(key);
  });
  const headers: Record<string, string> = { ...mimeHeaders };
  for (const [name, value] of Object.entries(record.headers ?? {})) headers[name.toLowerCase()] = value;
  return {
    fromAddress,
    fromDomain: addressDomain(fromAddress),
    recipients,
    subject: record.subject,
    html: record.html,
    text: record.text,
    headers,
    tags: record.tags ?? [],
  };
}

export function sendingDomainFacts(domain: Domain | null): SendingDomainFacts | null {
  if (!domain) return null;
  const tracking = domain.records.find((r) => r.record === 'Tracking');
  return {
    name: domain.name,
    openTracking: domain.openTracking,
    clickTracking: domain.clickTracking,
    trackingHost: domain.trackingSubdomain ? `${domain.trackingSubdomain}.${domain.name}` : null,
    trackingVerified: tracking?.status === 'verified',
  };
}

/** The header block of a MIME message (up to the first empty line), unfolded, names lowercased; the first of a repeated name wins. */
export function headerBlock(mime: Buffer): Record<string, string> {
  const text = mime.subarray(0, Math.min(mime.length, 256 * 1024)).toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = (end < 0 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}
