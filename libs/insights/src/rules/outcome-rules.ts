import type { OutcomeEvent, OutcomeFacts, Rule } from '../insight.types';
import { providerOf } from '../known-names';
import { list, plural } from './wording';

interface BounceData {
  type?: string;
  subType?: string;
  message?: string;
  diagnosticCode?: string[];
}

/** What delivery records of an SMTP transaction (Herald's `delivery` extension of the event data). */
interface DeliveryData {
  mx?: string | null;
  tls?: boolean;
  response?: string;
}

const ofType = (events: OutcomeEvent[], type: string) => events.filter((e) => e.type === type);
const deliveryOf = (event: OutcomeEvent): DeliveryData => (event.data.delivery ?? {}) as DeliveryData;

const BOUNCE_FIXES: Record<string, string> = {
  NoEmail: 'The address does not exist: remove it from your list (Herald has suppressed it) and check where it came from.',
  MailboxFull: "The recipient's mailbox is full: try again in a few days, and remove the address if it keeps bouncing.",
  MessageTooLarge: 'The message is too large for the recipient: link to big files instead of attaching them.',
  ContentRejected: 'The content was refused: check links, attachments and wording against spam filters, and that DKIM, SPF and DMARC pass.',
  AttachmentRejected: 'An attachment was refused: avoid executable or archive attachments and link to files instead.',
  Suppressed: 'The address is on a suppression list: remove it from your list.',
};

export const bounced: Rule<OutcomeFacts> = {
  id: 'bounced',
  check({ events }) {
    const bounces = ofType(events, 'email.bounced');
    if (!bounces.length) return null;
    const lines = bounces.map((e) => {
      const b = (e.data.bounce ?? {}) as BounceData;
      return `${e.recipients.join(', ')}: ${b.type ?? 'Undetermined'} ${b.subType ?? ''} bounce${b.diagnosticCode?.[0] ? ` (${b.diagnosticCode[0]})` : ''}`.replace(
        / +/g,
        ' ',
      );
    });
    const first = (bounces[0].data.bounce ?? {}) as BounceData;
    return {
      severity: 'attention',
      found: `The email bounced: ${list(lines, 3)}.`,
      fix:
        BOUNCE_FIXES[first.subType ?? ''] ??
        (first.type === 'Permanent'
          ? 'The recipient server refused the address for good: remove it from your list (Herald has suppressed it).'
          : 'Read the diagnostic above: a temporary refusal may pass later, a repeated one means the address or the content needs attention.'),
    };
  },
};

export const complained: Rule<OutcomeFacts> = {
  id: 'complained',
  check({ events }) {
    const complaints = ofType(events, 'email.complained');
    if (!complaints.length) return null;
    return {
      severity: 'attention',
      found: `A recipient marked the email as spam: ${list(complaints.flatMap((e) => e.recipients))}.`,
      fix: 'Stop mailing them (Herald has suppressed the address). Send only to people who asked for it, make unsubscribing one click, and keep complaints under 0.1%: above 0.3% Gmail and Yahoo start rejecting mail.',
    };
  },
};

export const deliveredWithoutTls: Rule<OutcomeFacts> = {
  id: 'delivered-without-tls',
  check({ events }) {
    const plain = ofType(events, 'email.delivered').filter((e) => deliveryOf(e).tls === false);
    if (!plain.length) return null;
    const where = plain.map((e) => `${e.recipients.join(', ')}${deliveryOf(e).mx ? ` via ${deliveryOf(e).mx}` : ''}`);
    return {
      severity: 'attention',
      found: `Delivered without TLS (the receiving server offered no STARTTLS): ${list(where, 3)}.`,
      fix: "The message crossed the network unencrypted. If it carries anything sensitive, set the domain's TLS to `enforced`: Herald then defers rather than sends in the clear. Otherwise ask the recipient's administrator to enable STARTTLS.",
    };
  },
};

/** Advice by what the deferring server said. */
function deferralFix(response: string): string {
  if (/\b4\.7\.(?:28|0)\b|rate|too many|throttl|unusual/i.test(response))
    return 'The provider is limiting your rate because it is not yet sure of your reputation. Herald retries with back-off; send at a steady pace, warm up a new domain gradually, and keep bounces and complaints low.';
  if (/\b4\.2\.2\b|mailbox full|quota|over quota/i.test(response))
    return "The recipient's mailbox is full. Herald keeps retrying until the retry window ends; nothing else to do.";
  if (/greylist|\b4\.7\.1\b|try again later/i.test(response))
    return 'This is greylisting: the first attempt from an unknown sender is deferred on purpose, and the retry usually goes through.';
  return 'Herald retries on its schedule until the email is delivered, or bounces when the retry window ends. If deferrals at this provider persist, check the reply above and your DKIM, SPF and DMARC.';
}

export const deferredByProvider: Rule<OutcomeFacts> = {
  id: 'deferred-by-provider',
  check({ events, recipients }) {
    const delayed = ofType(events, 'email.delivery_delayed');
    if (!delayed.length) return null;
    const detail = deliveryOf(delayed[0]);
    const addresses = [...new Set(delayed.flatMap((e) => e.recipients))];
    const response = detail.response ?? recipients.find((r) => addresses.includes(r.address) && r.status === 'deferred')?.lastResponse ?? null;
    const provider = detail.mx ? providerOf(detail.mx) : null;
    return {
      severity: 'attention',
      found: `Delivery to ${list(addresses)} was deferred${provider ? ` by ${provider}${provider !== detail.mx ? ` (${detail.mx})` : ''}` : ''}${response ? `: "${response}"` : ''}.`,
      fix: deferralFix(response ?? ''),
    };
  },
};

/** The machine flag of an `email.opened`/`email.clicked` (libs/tracking's classifier). */
const trackingOf = (event: OutcomeEvent) => (event.data.tracking ?? {}) as { machine?: boolean; reason?: string | null };

export const linkScannerClicks: Rule<OutcomeFacts> = {
  id: 'link-scanner-clicks',
  check({ events }) {
    const scanned = ofType(events, 'email.clicked').filter((e) => trackingOf(e).reason === 'link_scanner');
    if (!scanned.length) return null;
    const links = [...new Set(scanned.map((e) => (e.data.click as { link?: string } | undefined)?.link ?? '?'))];
    return {
      severity: 'improvement',
      found: `A link scanner followed ${plural(links.length, 'link')} within seconds of delivery (${list([...new Set(scanned.flatMap((e) => e.recipients))])}): ${list(links)}. These clicks are flagged machine and left out of unique clicks.`,
      fix: "The recipient's security gateway opens links as the message arrives. Make links that work once (resets, sign-in, confirmations) act only on a click on their page (a button that POSTs), or mark them `data-herald-no-track`, so a scanner cannot use them up.",
    };
  },
};

export const machineOpensOnly: Rule<OutcomeFacts> = {
  id: 'machine-opens-only',
  check({ events }) {
    const opens = ofType(events, 'email.opened');
    if (!opens.length || opens.some((e) => !trackingOf(e).machine)) return null;
    const apple = opens.filter((e) => trackingOf(e).reason === 'apple_privacy').length;
    return {
      severity: 'improvement',
      found: `Every open of this email (${opens.length}) came from a machine${apple ? `, ${apple} of them Apple Mail Privacy Protection's prefetch` : ''}: none shows that a person read it.`,
      fix: "Read opens as approximate: Apple Mail fetches every message's images when it arrives, opened or not, and scanners fetch them too. Judge engagement by clicks, replies and conversions; Herald counts machine opens apart in metrics.",
    };
  },
};

export const OUTCOME_RULES = [bounced, complained, deferredByProvider, deliveredWithoutTls, linkScannerClicks, machineOpensOnly];
