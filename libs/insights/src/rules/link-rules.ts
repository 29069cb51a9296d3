import { isIP } from 'node:net';
import { organizationalDomain } from '@herald/domains';
import type { ContentFacts, Rule } from '../insight.types';
import { URL_SHORTENERS } from '../known-names';
import type { ScannedLink } from '../message-scan';
import { list, plural } from './wording';

const withoutWww = (host: string) => host.replace(/^www\./, '');
const isYoutuBe = (host: string) => withoutWww(host) === 'youtu.be';
const isIpAddress = (host: string) => isIP(host) !== 0;
const isShortener = (host: string) => URL_SHORTENERS.has(withoutWww(host));

/** http(s) links of the message, each host once, in order of appearance. */
const hosts = (links: ScannedLink[], keep: (host: string) => boolean): string[] => [
  ...new Set(links.map((l) => l.host).filter((h): h is string => h !== null && keep(h))),
];

/**
 * Resend's check: links should point to the sending domain. A link to the sending domain's
 * organization (acme.com, www.acme.com, links.acme.com for mail from mail.acme.com) matches;
 * links that a more specific rule reports (IP addresses, shorteners, youtu.be) are left to it.
 */
export const linkDomainMismatch: Rule<ContentFacts> = {
  id: 'link-domain-mismatch',
  check({ email, scan }) {
    const organization = organizationalDomain(email.fromDomain);
    const web = scan.links.filter((l) => l.host !== null);
    const foreign = hosts(web, (h) => !isIpAddress(h) && !isShortener(h) && !isYoutuBe(h) && organizationalDomain(h) !== organization);
    if (!foreign.length) return null;
    const count = web.filter((l) => foreign.includes(l.host!)).length;
    return {
      severity: 'attention',
      found: `${count} of ${plural(web.length, 'link')} point to ${plural(foreign.length, 'domain')} other than ${organization}: ${list(foreign)}.`,
      fix: `Link to pages on ${organization} or its subdomains. Links to other domains than the sender's are a common phishing signal; link to a page of your own that leads on, or send from the domain the links belong to.`,
    };
  },
};

export const youtuBeLink: Rule<ContentFacts> = {
  id: 'youtu-be-link',
  check({ scan }) {
    const short = scan.links.filter((l) => l.host !== null && isYoutuBe(l.host));
    if (!short.length) return null;
    return {
      severity: 'attention',
      found: `${plural(short.length, 'link')} ${short.length === 1 ? 'uses' : 'use'} the youtu.be shortener: ${list(short.map((l) => l.url))}.`,
      fix: 'Use the full https://www.youtube.com/watch?v=… address: spam filters distrust shortened links, whatever they lead to.',
    };
  },
};

export const ipAddressLink: Rule<ContentFacts> = {
  id: 'ip-address-link',
  check({ scan }) {
    const found = hosts(scan.links, isIpAddress);
    if (!found.length) return null;
    return {
      severity: 'attention',
      found: `Links point to a bare IP address instead of a domain name: ${list(found)}.`,
      fix: 'Link to a domain name (ideally on your sending domain). Links to raw IP addresses are a classic phishing pattern and most filters penalize them heavily.',
    };
  },
};

export const urlShortenerLink: Rule<ContentFacts> = {
  id: 'url-shortener-link',
  check({ scan }) {
    const found = hosts(scan.links, isShortener);
    if (!found.length) return null;
    return {
      severity: 'attention',
      found: `Links go through a public URL shortener: ${list(found)}.`,
      fix: 'Link to the full destination URL. Public shorteners hide where a link leads, so spammers use them and filters block or downgrade mail that contains them.',
    };
  },
};

export const LINK_RULES = [linkDomainMismatch, youtuBeLink, ipAddressLink, urlShortenerLink];
