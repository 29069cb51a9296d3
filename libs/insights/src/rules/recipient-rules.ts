import type { ContentFacts, Rule } from '../insight.types';
import { likelyIntendedDomain, ROLE_LOCAL_PARTS } from '../known-names';
import { list } from './wording';

const localPart = (address: string) => address.slice(0, address.lastIndexOf('@')).toLowerCase().replace(/\+.*$/, '');
const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

export const roleRecipient: Rule<ContentFacts> = {
  id: 'role-recipient',
  check({ email }) {
    const roles = email.recipients.filter((r) => ROLE_LOCAL_PARTS.has(localPart(r)));
    if (!roles.length) return null;
    return {
      severity: 'improvement',
      found: `Sent to a role address rather than a person: ${list(roles)}.`,
      fix: 'Send to the person instead. Role mailboxes (postmaster@, abuse@, info@) are shared or read by filters and abuse desks; they complain more often, and some lists of them are spam traps.',
    };
  },
};

export const recipientDomainTypo: Rule<ContentFacts> = {
  id: 'recipient-domain-typo',
  check({ email }) {
    const typos = email.recipients.flatMap((r) => {
      const intended = likelyIntendedDomain(domainOf(r));
      return intended ? [`${r} (did you mean ${intended}?)`] : [];
    });
    if (!typos.length) return null;
    return {
      severity: 'attention',
      found: `A recipient's domain looks like a typo of a big provider: ${list(typos)}.`,
      fix: 'Correct the address, and check addresses where you collect them (ask for the address twice, or suggest the fix as they type). Typo domains bounce, or worse, are registered as spam traps.',
    };
  },
};

export const recipientHistory: Rule<ContentFacts> = {
  id: 'recipient-history',
  check({ history }) {
    if (!history.length) return null;
    const lines = history.map((h) => {
      const when = h.at.toISOString().slice(0, 10);
      const what =
        h.kind === 'bounced'
          ? 'bounced'
          : h.origin === 'complaint'
            ? 'complained (marked an email as spam)'
            : h.origin === 'bounce'
              ? 'hard-bounced'
              : 'was suppressed by hand';
      return `${h.address} ${what} on ${when}${h.detail ? ` (${h.detail})` : ''}`;
    });
    return {
      severity: 'attention',
      found: `A recipient has earlier trouble: ${list(lines, 3)}.`,
      fix: 'Remove addresses that bounced or complained from your list, and confirm an address before mailing it again. Herald does not send to suppressed addresses; repeated bounces and complaints lower your reputation with every provider.',
    };
  },
};

export const RECIPIENT_RULES = [recipientDomainTypo, recipientHistory, roleRecipient];
