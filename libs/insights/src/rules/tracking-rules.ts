import { randomBytes } from 'node:crypto';
import { organizationalDomain } from '@herald/domains';
import { listUnsubscribeUrls, TrackingKeys, TrackingLinks } from '@herald/tracking';
import type { ContentFacts, Rule, SendingDomainFacts } from '../insight.types';
import type { ScannedLink } from '../message-scan';
import { GMAIL_CLIP_BYTES } from './body-rules';
import { kilobytes, list, plural } from './wording';

/*
 * What open and click tracking does to a message: links whose text shows another address than
 * they lead to, one-time links that link scanners use up, the size the rewritten links and the
 * pixel add, and open tracking that cannot work. Tracking counts only once the domain's tracking
 * subdomain is verified (API.md §13); before that, sender-rules.ts says so.
 */

/** More links than this: filters weigh link-heavy messages as spam, and each tracked link is one more redirect. */
export const MANY_LINKS = 30;

/** Link text that reads as an address: `https://acme.com/x`, `www.acme.com`, `acme.com/help`. */
const URL_TEXT = /^(?:https?:\/\/)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:[/?#]\S*)?$/i;
/** Paths and parameters of links that work once: resets, magic sign-in links, confirmations, invitations, tokens. */
const ONE_TIME =
  /(?:^|[/_.-])(?:reset|magic|verify|verification|confirm|confirmation|activate|activation|otp|one-?time|invite|invitation)(?:$|[/_.?&=-])|[?&](?:token|code|otp|key|sig|signature)=/i;

const clickTracked = (d: SendingDomainFacts | null): boolean => Boolean(d?.clickTracking && d.trackingVerified);
const openTracked = (d: SendingDomainFacts | null): boolean => Boolean(d?.openTracking && d.trackingVerified);

/** The host a link's text shows, or null when the text is words. */
function shownHost(text: string | null): string | null {
  if (!text || !URL_TEXT.test(text)) return null;
  try {
    return new URL(/^https?:\/\//i.test(text) ? text : `https://${text}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** The http(s) links the worker rewrites: not marked no-track, not a List-Unsubscribe target. */
function trackedLinks({ email, scan }: ContentFacts): ScannedLink[] {
  const unsubscribe = listUnsubscribeUrls(email.headers['list-unsubscribe']);
  return scan.links.filter((l) => l.host !== null && !l.noTrack && !unsubscribe.has(l.url));
}

export const linkTextUrlMismatch: Rule<ContentFacts> = {
  id: 'link-text-url-mismatch',
  check({ scan }) {
    const mismatched = scan.links.filter((l) => {
      const shown = shownHost(l.text);
      return shown !== null && l.host !== null && organizationalDomain(shown) !== organizationalDomain(l.host);
    });
    if (!mismatched.length) return null;
    return {
      severity: 'attention',
      found: `${plural(mismatched.length, 'link')} ${mismatched.length === 1 ? 'shows' : 'show'} one address and ${mismatched.length === 1 ? 'leads' : 'lead'} to another: ${list(mismatched.map((l) => `"${l.text}" → ${l.host}`))}.`,
      fix: 'Make a link that displays an address lead to that address, or give it words as its text ("Open your account"). A link whose text is one URL and whose target is another is the commonest phishing pattern, and filters look for it.',
    };
  },
};

export const clickTrackedUrlText: Rule<ContentFacts> = {
  id: 'click-tracking-url-text',
  check(facts) {
    if (!clickTracked(facts.domain)) return null;
    const shown = trackedLinks(facts).filter((l) => shownHost(l.text) !== null);
    if (!shown.length) return null;
    return {
      severity: 'improvement',
      found: `Click tracking is on, and ${plural(shown.length, 'tracked link')} ${shown.length === 1 ? 'shows its address' : 'show their address'} as ${shown.length === 1 ? 'its' : 'their'} text: ${list(shown.map((l) => `"${l.text}"`))}. Rewritten, each leads through ${facts.domain!.trackingHost} instead.`,
      fix: 'Give tracked links words as their text, or mark those links `data-herald-no-track`. A link showing one address and pointing to another (the tracking host) is what filters and careful readers distrust.',
    };
  },
};

export const clickTrackingOneTimeLink: Rule<ContentFacts> = {
  id: 'click-tracking-one-time-link',
  check(facts) {
    if (!clickTracked(facts.domain)) return null;
    const once = trackedLinks(facts).filter((l) => {
      try {
        const url = new URL(l.url);
        return ONE_TIME.test(`${url.pathname}${url.search}`);
      } catch {
        return false;
      }
    });
    if (!once.length) return null;
    return {
      severity: 'attention',
      found: `Click tracking rewrites ${plural(once.length, 'link')} that ${once.length === 1 ? 'looks' : 'look'} single-use (a reset, sign-in, confirmation or token link): ${list(once.map((l) => l.url))}.`,
      fix: 'Mark such links `data-herald-no-track` (or send this mail from a domain without click tracking), and make the page they open act only on a click (a button that POSTs), not on the GET. Security gateways follow every link as the message arrives; a link that works once is used up before the reader gets to it.',
    };
  },
};

export const tooManyLinks: Rule<ContentFacts> = {
  id: 'too-many-links',
  check({ scan }) {
    const web = scan.links.filter((l) => l.host !== null);
    if (web.length <= MANY_LINKS) return null;
    return {
      severity: 'improvement',
      found: `The email has ${plural(web.length, 'link')} (more than ${MANY_LINKS}).`,
      fix: 'Link to fewer places: the few actions you want, and a page for the rest. Filters score link-heavy messages as likely spam, and with click tracking each link is one more redirect and a longer message.',
    };
  },
};

export const trackingClipsMessage: Rule<ContentFacts> = {
  id: 'tracking-gmail-clipping',
  check({ email, scan, domain }) {
    const open = openTracked(domain);
    const click = clickTracked(domain);
    if (email.html === null || !domain?.trackingHost || !(open || click) || scan.htmlBytes > GMAIL_CLIP_BYTES) return null;
    // The html the worker sends (a throwaway key signs tokens of the real length).
    const render = new TrackingLinks(TrackingKeys.of([randomBytes(32)]), { protocol: 'https' }).prepare(
      { open, click, host: domain.trackingHost },
      { id: '00000000-0000-7000-8000-000000000000', html: email.html, headers: email.headers },
    );
    const tracked = render ? Buffer.byteLength(render(0, new Date()), 'utf8') : scan.htmlBytes;
    if (tracked <= GMAIL_CLIP_BYTES) return null;
    return {
      severity: 'attention',
      found: `The HTML part is ${kilobytes(scan.htmlBytes)}, and ${kilobytes(tracked)} once tracking rewrites its links and adds the pixel: over Gmail's 102 KB, so Gmail clips it.`,
      fix: 'Trim the HTML or track fewer links (`data-herald-no-track`). Gmail hides everything past 102 KB, the open pixel at the end included: clipped messages lose their footer and record no opens.',
    };
  },
};

export const openTrackingWithoutHtml: Rule<ContentFacts> = {
  id: 'open-tracking-without-html',
  check({ email, domain }) {
    if (!openTracked(domain) || email.html !== null) return null;
    return {
      severity: 'improvement',
      found: `Open tracking is on for ${domain!.name}, but this email has no HTML part, so its opens are not tracked.`,
      fix: 'Opens are counted by an image in the HTML part: send `html` as well as `text` to track them, or rely on clicks and replies for this kind of mail.',
    };
  },
};

export const TRACKING_RULES = [
  linkTextUrlMismatch,
  clickTrackedUrlText,
  clickTrackingOneTimeLink,
  tooManyLinks,
  trackingClipsMessage,
  openTrackingWithoutHtml,
];
