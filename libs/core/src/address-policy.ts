import { BlockList, isIP } from 'node:net';

/*
 * Herald's server-side request forgery policy, shared by everything that connects to a URL a
 * customer gave (webhook endpoints, `path` attachments): which addresses count as private,
 * loopback, link-local, unique-local or metadata, and the operator's allowlist of such addresses
 * that may be reached anyway (WEBHOOK_ALLOWED_ADDRESSES, ATTACHMENT_ALLOWED_ADDRESSES).
 * `classifyHost` does not resolve hostnames: callers resolve and check the address they connect
 * to (DNS rebinding, odd encodings that resolve). WHATWG URL parsing already normalizes IPv4 odd
 * encodings (`http://2130706433/`, `http://0x7f.1/`) to dotted quads, so they are caught too.
 */

function ipv4Octets(address: string): number[] | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  const octets = parts.map(Number);
  return octets.every((o, i) => /^\d{1,3}$/.test(parts[i] ?? '') && o >= 0 && o <= 255) ? octets : null;
}

export type AddressClass = 'loopback' | 'private' | 'public';

function classifyIpv4(address: string): AddressClass {
  const o = ipv4Octets(address);
  if (!o) return 'public';
  const [a = 0, b = 0] = o;
  if (a === 127) return 'loopback';
  if (a === 0) return 'private'; // "this network"; 0.0.0.0 reaches the local host on Linux
  if (a === 10) return 'private';
  if (a === 172 && b >= 16 && b <= 31) return 'private';
  if (a === 192 && b === 168) return 'private';
  if (a === 169 && b === 254) return 'private'; // link-local, cloud metadata 169.254.169.254
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // CGNAT, also used by some metadata services
  if (a === 192 && b === 0 && o[2] === 0) return 'private'; // IETF protocol assignments (192.0.0.0/24)
  if (a === 198 && (b === 18 || b === 19)) return 'private'; // benchmarking (198.18.0.0/15), used inside networks
  if (a >= 224) return 'private'; // multicast, reserved (240/4) and broadcast: never a web server
  return 'public';
}

/** Expands an IPv6 literal to its 8 groups; null if it is not one. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  let tail: number[] = [];
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const o = ipv4Octets(v4[2] ?? '');
    if (!o) return null;
    tail = [(o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!];
    text = `${v4[1]}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  const groups = [...head, ...new Array<number>(Math.max(fill, 0)).fill(0), ...rest];
  if (groups.length !== 8 || groups.some((g) => Number.isNaN(g))) return null;
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups;
}

function classifyIpv6(address: string): AddressClass {
  const g = ipv6Groups(address);
  if (!g) return 'public';
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback'; // ::1
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 0) return 'private'; // ::
  const embedded = `${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`;
  if (zeroPrefix && g5 === 0xffff) return classifyIpv4(embedded); // IPv4-mapped ::ffff:a.b.c.d
  if (zeroPrefix && g5 === 0) return classifyIpv4(embedded) === 'public' ? 'private' : classifyIpv4(embedded); // deprecated IPv4-compatible
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIpv4(embedded); // NAT64
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local (incl. fd00:ec2::254 metadata)
  if ((g0 & 0xffc0) === 0xfe80) return 'private'; // fe80::/10 link-local
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'private'; // ff00::/8 multicast
  if (g0 === 0x2002) {
    // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits: as private as that address
    const inner = classifyIpv4(`${g1 >> 8}.${g1 & 255}.${g2 >> 8}.${g2 & 255}`);
    if (inner !== 'public') return 'private';
  }
  return 'public';
}

/** The class of a URL host (as `new URL().hostname` gives it: IPv6 in brackets); hostnames are `public` here. */
export function classifyHost(hostname: string): AddressClass {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const family = isIP(host);
  if (family === 4) return classifyIpv4(host);
  if (family === 6) return classifyIpv6(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  return 'public';
}

/** Whether an address (no brackets) is on the configured allowlist (WEBHOOK_ALLOWED_ADDRESSES, ATTACHMENT_ALLOWED_ADDRESSES). */
export type AddressAllowList = (address: string) => boolean;

/**
 * An allowlist from IPs and CIDRs (`127.0.0.0/8`, `::1`). An IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`) is checked as the IPv4 address it carries.
 */
export function addressAllowList(entries: readonly string[]): AddressAllowList {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (raw) => {
    const address = raw.replace(/^\[|\]$/g, '');
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped ? mapped[1]! : address;
    const family = isIP(plain);
    if (family === 0) return false;
    return list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * Whether a URL host passes the create/update check: public, or (a literal IP, or `localhost`
 * taken as 127.0.0.1 and ::1) allowed by the allowlist. Hostnames are checked again, resolved, at delivery.
 */
export function hostAllowed(hostname: string, allowed: AddressAllowList): boolean {
  const kind = classifyHost(hostname);
  if (kind === 'public') return true;
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(host) !== 0) return allowed(host);
  return allowed('127.0.0.1') || allowed('::1');
}
