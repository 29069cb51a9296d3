import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * `tag=value; tag=value` lists (DKIM key records, RFC 6376 §3.2; DMARC records, RFC 7489 §6.4).
 * Tag names are compared in lower case; values keep their case, trimmed. Order does not matter.
 */
export function parseTagList(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at < 1) continue;
    const name = part.slice(0, at).trim().toLowerCase();
    if (name && !tags.has(name)) tags.set(name, part.slice(at + 1).trim());
  }
  return tags;
}

/** The parts of a DKIM key record that decide whether it publishes a given key. */
export interface DkimKeyRecord {
  /** Base64 with all whitespace removed (RFC 6376 allows folding inside `p=`); empty = revoked. */
  publicKey: string;
  keyType: string;
}

/** A DKIM key record has `p=` and, if it has `v=`, `v=DKIM1` (RFC 6376 §3.6.1). */
export function parseDkimKeyRecord(text: string): DkimKeyRecord | null {
  const tags = parseTagList(text);
  const version = tags.get('v');
  const publicKey = tags.get('p');
  if (publicKey === undefined || (version !== undefined && version !== 'DKIM1')) return null;
  return { publicKey: publicKey.replace(/\s+/g, ''), keyType: (tags.get('k') ?? 'rsa').toLowerCase() };
}

export const isSpfRecord = (text: string): boolean => /^v=spf1(\s|$)/i.test(text.trim());

/** One SPF term (RFC 7208 §4.6.1): a mechanism with its qualifier, or a `name=value` modifier. */
export interface SpfTerm {
  qualifier: '+' | '-' | '~' | '?';
  /** Mechanism or modifier name, lower case. */
  name: string;
  /** The argument after `:` or `=` (domain or address), lower case without a trailing dot. */
  argument: string;
  modifier: boolean;
  text: string;
}

export function parseSpfTerms(record: string): SpfTerm[] {
  return record
    .trim()
    .split(/\s+/)
    .slice(1)
    .filter(Boolean)
    .map((text) => {
      const modifier = /^[a-z][a-z0-9_.-]*=/i.test(text);
      const qualifier = !modifier && /^[-+~?]/.test(text) ? (text[0] as SpfTerm['qualifier']) : '+';
      const body = !modifier && /^[-+~?]/.test(text) ? text.slice(1) : text;
      const split = body.search(modifier ? /=/ : /[:/]/);
      const name = (split < 0 ? body : body.slice(0, split)).toLowerCase();
      const rest = split < 0 ? '' : body.slice(split).replace(/^[:=]/, '');
      return { qualifier, name, argument: rest.toLowerCase().replace(/\.$/, ''), modifier, text };
    });
}

/**
 * The mechanisms of the expected record that a published record must also pass for Herald's
 * servers: every one of them except `all`, which only says what happens to everyone else.
 */
export function requiredSpfTerms(expected: string): SpfTerm[] {
  return parseSpfTerms(expected).filter((t) => !t.modifier && t.name !== 'all' && t.qualifier === '+');
}

/**
 * The required terms a published record does not authorize. A term is authorized when a
 * pass (`+`) mechanism covers it before any `all` (evaluation stops there, RFC 7208 §4.6.2);
 * `ip4`/`ip6` are covered by an equal or wider network, other mechanisms by an equal argument.
 */
export function unauthorizedSpfTerms(published: string, required: SpfTerm[]): SpfTerm[] {
  const terms = parseSpfTerms(published).filter((t) => !t.modifier);
  const end = terms.findIndex((t) => t.name === 'all');
  const reached = end < 0 ? terms : terms.slice(0, end);
  const passing = reached.filter((t) => t.qualifier === '+');
  return required.filter((want) => !passing.some((have) => covers(have, want)));
}

function covers(have: SpfTerm, want: SpfTerm): boolean {
  if (have.name !== want.name) return false;
  if (have.argument === want.argument) return true;
  if (want.name !== 'ip4' && want.name !== 'ip6') return false;
  const outer = network(have.argument, want.name);
  const inner = network(want.argument, want.name);
  if (!outer || !inner || outer.prefix > inner.prefix) return false;
  // The outer network is aligned and at least as wide, so holding one address of the inner one
  // means holding all of it.
  const list = new BlockList();
  list.addSubnet(outer.address, outer.prefix, outer.family);
  return list.check(inner.address, inner.family);
}

function network(argument: string, mechanism: 'ip4' | 'ip6' | string) {
  const [address, length] = argument.split('/');
  const family = mechanism === 'ip4' ? ('ipv4' as const) : ('ipv6' as const);
  const valid = family === 'ipv4' ? isIPv4(address) : isIPv6(address);
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = length === undefined ? max : Number(length);
  if (!valid || !Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { address, prefix, family };
}

/** Host names compared as DNS does: case-insensitive, with or without the root dot. */
export const sameHost = (a: string, b: string): boolean => a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');
