import { domainToASCII } from 'node:url';

/*
 * The subset of RFC 5322 mailboxes Herald accepts, as Resend documents them:
 *   hi@acme.com  |  Acme <hi@acme.com>  |  "Acme, Inc." <hi@acme.com>  |  <hi@acme.com>
 * Not accepted, because no Resend client sends them and each complicates delivery: groups,
 * comments, quoted local parts ("john doe"@x), IP literals, non-ASCII local parts (they need
 * SMTPUTF8 end to end). Internationalized domains are accepted in Unicode or punycode.
 */

export interface ParsedAddress {
  display: string | null;
  address: string;
}

const MAX_ADDRESS = 254; // RFC 5321 path limit minus the angle brackets
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
const ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-";
const LOCAL_PART = new RegExp(`^[${ATEXT}]+(?:\\.[${ATEXT}]+)*$`);
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TOP_LEVEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
// An unquoted display name: these would split a list, start a group or an escape. `@` is let
// through (RFC 5322 wants it quoted) because `hi@acme.com <hi@acme.com>` is common and unambiguous.
const UNQUOTED_FORBIDDEN = /[\p{Cc}"<>,;:\\]/u;
const CONTROL = /\p{Cc}/u;
// Names made only of these characters are written without quotes (atext plus spaces and dots).
const PLAIN_NAME = new RegExp(`^[ .${ATEXT}]+$`);

export function parseAddress(value: string): ParsedAddress | null {
  const input = value.trim();
  if (!input.endsWith('>')) return isValidAddrSpec(input) ? { display: null, address: input } : null;
  const named = input.startsWith('"') ? splitQuoted(input) : splitUnquoted(input);
  if (!named) return null;
  const angle = named.rest.trim();
  if (!angle.startsWith('<')) return null;
  const address = angle.slice(1, -1).trim();
  if (!isValidAddrSpec(address)) return null;
  return { display: named.display.trim() || null, address };
}

/** The inverse of parseAddress: quotes the display name only when a phrase cannot carry it. */
export function formatAddress({ display, address }: ParsedAddress): string {
  if (display === null || display.trim() === '') return address;
  if (PLAIN_NAME.test(display)) return `${display} <${address}>`;
  return `"${display.replace(/(["\\])/g, '\\$1')}" <${address}>`;
}

export function isValidAddrSpec(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at <= 0) return false;
  const local = address.slice(0, at);
  const domain = asciiDomain(address.slice(at + 1));
  return domain !== null && local.length <= MAX_LOCAL && LOCAL_PART.test(local) && local.length + 1 + domain.length <= MAX_ADDRESS;
}

/** The lowercased ASCII (punycode) domain of a valid bare address. */
export function addressDomain(address: string): string {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return asciiDomain(domain) ?? domain.toLowerCase();
}

/** The key under which two spellings of one mailbox are the same recipient. */
export function addressKey(address: string): string {
  return `${address.slice(0, address.lastIndexOf('@')).toLowerCase()}@${addressDomain(address)}`;
}

/**
 * Checking a domain costs an IDNA conversion and five regular expressions, for every address of
 * every email, while the domains a service sees repeat: the answers for the last 10,000 domains
 * seen are kept (a pure function of the string, so a cached answer is the same answer).
 */
const ASCII_DOMAIN_CACHE_SIZE = 10_000;
const asciiDomains = new Map<string, string | null>();

function asciiDomain(domain: string): string | null {
  const known = asciiDomains.get(domain);
  if (known !== undefined) return known;
  const ascii = checkedAsciiDomain(domain);
  if (asciiDomains.size >= ASCII_DOMAIN_CACHE_SIZE) asciiDomains.delete(asciiDomains.keys().next().value!);
  asciiDomains.set(domain, ascii);
  return ascii;
}

function checkedAsciiDomain(domain: string): string | null {
  if (domain === '' || /\s/.test(domain)) return null;
  // domainToASCII lowercases, maps Unicode to punycode and returns '' for what IDNA rejects.
  const ascii = domainToASCII(domain);
  if (ascii === '' || ascii.length > MAX_DOMAIN) return null;
  const labels = ascii.split('.');
  const top = labels[labels.length - 1] ?? '';
  if (labels.length < 2 || !TOP_LEVEL.test(top)) return null;
  return labels.every((label) => LABEL.test(label)) ? ascii : null;
}

function splitUnquoted(input: string): { display: string; rest: string } | null {
  const lt = input.indexOf('<');
  if (lt < 0) return null;
  const display = input.slice(0, lt);
  return UNQUOTED_FORBIDDEN.test(display) ? null : { display, rest: input.slice(lt) };
}

/** Reads `"..."` with `\` escapes; CR, LF and other controls are never part of a name. */
function splitQuoted(input: string): { display: string; rest: string } | null {
  let display = '';
  for (let i = 1; i < input.length; i++) {
    const ch = input[i] as string;
    if (CONTROL.test(ch)) return null;
    if (ch === '"') return { display, rest: input.slice(i + 1) };
    if (ch === '\\') {
      const next = input[++i];
      if (next === undefined || CONTROL.test(next)) return null;
      display += next;
    } else {
      display += ch;
    }
  }
  return null;
}
