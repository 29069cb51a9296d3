import { organizationalDomain } from '@herald/domains';
import type { ContentFacts, Rule } from '../insight.types';
import { looksTransactional } from './body-rules';

const NO_REPLY = /^(?:no|do[-_.]?not)[-_.]?reply(?:[-_.+].*)?$/i;

export const noReplySender: Rule<ContentFacts> = {
  id: 'no-reply-sender',
  check({ email }) {
    const local = email.fromAddress.slice(0, email.fromAddress.lastIndexOf('@'));
    if (!NO_REPLY.test(local)) return null;
    return {
      severity: 'attention',
      found: `The sender is a no-reply address: ${email.fromAddress}.`,
      fix: 'Send from an address people can answer (hello@, support@, or a person). Replies are a positive signal to mailbox providers, and a no-reply address turns them into complaints.',
    };
  },
};

export const dmarcMissing: Rule<ContentFacts> = {
  id: 'dmarc-missing',
  check({ email, dmarc }) {
    if (dmarc.kind === 'unknown' || (dmarc.kind === 'found' && dmarc.policy !== null)) return null;
    const organization = organizationalDomain(email.fromDomain);
    return {
      severity: 'attention',
      found:
        dmarc.kind === 'missing'
          ? `No DMARC record at _dmarc.${email.fromDomain}${organization !== email.fromDomain ? ` or _dmarc.${organization}` : ''}.`
          : `The DMARC record for ${email.fromDomain} is not valid (no p= policy): "${dmarc.record}".`,
      fix: `Publish a TXT record at _dmarc.${organization}, starting with \`v=DMARC1; p=none; rua=mailto:…\` to collect reports, then move to p=quarantine. Gmail and Yahoo require DMARC from bulk senders.`,
    };
  },
};

export const dmarcPolicyNone: Rule<ContentFacts> = {
  id: 'dmarc-policy-none',
  check({ email, dmarc }) {
    if (dmarc.kind !== 'found' || dmarc.policy !== 'none') return null;
    return {
      severity: 'improvement',
      found: `The DMARC policy for ${email.fromDomain} is p=none: "${dmarc.record}".`,
      fix: 'Once the aggregate reports show all your mail passing DKIM or SPF aligned, move to p=quarantine, then p=reject: at p=none anyone can still send mail as your domain.',
    };
  },
};

export const rootDomainSender: Rule<ContentFacts> = {
  id: 'root-domain-sender',
  check({ email }) {
    if (organizationalDomain(email.fromDomain) !== email.fromDomain) return null;
    return {
      severity: 'improvement',
      found: `The email is sent from the root domain ${email.fromDomain}.`,
      fix: `Send from a subdomain such as mail.${email.fromDomain} or updates.${email.fromDomain}. Its sending reputation is then its own: a problem with this mail does not spill onto the mail your team sends from ${email.fromDomain} itself.`,
    };
  },
};

const trackingSubdomainRule = (id: string, kind: 'click' | 'open'): Rule<ContentFacts> => ({
  id,
  check({ domain }) {
    const on = kind === 'click' ? domain?.clickTracking : domain?.openTracking;
    if (!domain || !on || domain.trackingVerified) return null;
    const host = domain.trackingHost ?? `links.${domain.name}`;
    return {
      severity: 'improvement',
      found: `${kind === 'click' ? 'Click' : 'Open'} tracking is on for ${domain.name}, but its tracking subdomain ${host} is not verified, so ${kind}s are not tracked.`,
      fix: `Publish the Tracking CNAME record shown on the domain's page for ${host} and verify the domain. Tracked ${kind === 'click' ? 'links' : 'pixels'} on your own subdomain keep the reputation your own, instead of a shared tracking domain's.`,
    };
  },
});

export const clickTrackingSubdomain = trackingSubdomainRule('click-tracking-subdomain', 'click');
export const openTrackingSubdomain = trackingSubdomainRule('open-tracking-subdomain', 'open');

export const trackingOnTransactional: Rule<ContentFacts> = {
  id: 'tracking-on-transactional',
  check({ email, domain }) {
    if (!domain || !(domain.openTracking || domain.clickTracking) || !looksTransactional(email)) return null;
    const which = [domain.openTracking && 'open', domain.clickTracking && 'click'].filter(Boolean).join(' and ');
    return {
      severity: 'improvement',
      found: `${which[0].toUpperCase()}${which.slice(1)} tracking is on for ${domain.name}, and this email looks transactional (subject "${email.subject}").`,
      fix: 'Turn tracking off for transactional mail (or send it from a domain without tracking). Rewritten links and pixels make receipts, codes and resets look like marketing to filters, and link scanners may open one-time links before the reader does.',
    };
  },
};

export const SENDER_RULES = [
  dmarcMissing,
  noReplySender,
  rootDomainSender,
  clickTrackingSubdomain,
  openTrackingSubdomain,
  dmarcPolicyNone,
  trackingOnTransactional,
];
