import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';

/** The kinds of value the configuration's variables hold, each parsed from its environment string. */
export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const MAX_CACHED_REGIONS = 1_000;
const regionIdCodes = new Map<string, number>();

/**
 * A region's 12-bit code in the email ids it holds (newRegionalId in @herald/core): derived from its
 * name alone, so every process agrees on it with no table to share. Every AWS region's name has its own.
 */
export function regionIdCode(region: string): number {
  let code = regionIdCodes.get(region);
  if (code === undefined) {
    code = createHash('sha256').update(`herald-region:${region}`).digest().readUInt16BE(0) & 0xfff;
    // Asked for every email id made and read: a deployment's few regions, hashed once each.
    if (regionIdCodes.size < MAX_CACHED_REGIONS) regionIdCodes.set(region, code);
  }
  return code;
}

export const regionName = z.string().regex(/^[a-z]{2}-[a-z]+-\d$/, 'must look like us-east-1');
export const list = (item: z.ZodString) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1));
export const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with protocol ${protocols.join(' or ')}`,
  );
/** Comma-separated IPs or CIDRs (`10.0.0.0/8`, `::1`, `fd00::/8`); empty for none. */
export const cidrList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z.string().refine((v) => {
        const [address = '', prefix, extra] = v.split('/');
        const family = isIP(address);
        if (family === 0 || extra !== undefined) return false;
        return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
      }, 'must be an IP address or CIDR like 10.0.0.0/8'),
    ),
  );
/** Comma-separated whole seconds, e.g. `0,5,300`; at least one. */
export const secondsList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(z.string().regex(/^\d{1,7}$/, 'must be whole seconds'))
      .min(1)
      .max(50),
  )
  .transform((items) => items.map(Number));

/** `plan=value` pairs separated by commas, e.g. `free=10,scale-1m=100`. */
export const planNumbers = z.string().transform((s, ctx) => {
  const out: Record<string, number> = {};
  for (const pair of s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [plan, value] = pair.split('=');
    const n = Number(value);
    if (!plan || !Number.isInteger(n) || n < 1) {
      ctx.addIssue({ code: 'custom', message: `"${pair}" is not plan=positive-integer` });
      return z.NEVER;
    }
    out[plan.trim()] = n;
  }
  return out;
});

/** `region=value` pairs separated by commas; a value may contain spaces. A region named twice is refused (which one would win?). */
export const regionPairs = z.string().transform((s, ctx) => {
  const out: Record<string, string> = {};
  for (const pair of s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.indexOf('=');
    const region = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    if (at < 1 || !value) {
      ctx.addIssue({ code: 'custom', message: `"${pair}" is not region=value` });
      return z.NEVER;
    }
    if (Object.hasOwn(out, region)) {
      ctx.addIssue({ code: 'custom', message: `names ${region} twice` });
      return z.NEVER;
    }
    out[region] = value;
  }
  return out;
});

/**
 * A database URL as the value of a `region=url` pair: one URL. Pairs are separated by commas only,
 * so `eu-west-1=postgres://a/x;us-east-1=postgres://b/y` would otherwise be one URL, eu-west-1's,
 * whose database name is `x;us-east-1=postgres://b/y`.
 */
export const oneUrl = (protocols: string[]) =>
  url(protocols).refine((v) => v.indexOf('://') === v.lastIndexOf('://'), 'holds more than one URL: separate region=url pairs with commas');

/** `port:mode` pairs, e.g. `465:tls,587:starttls`: the SMTP relay's listeners (port 0 picks a free one). */
export const smtpPorts = z.string().transform((s, ctx) => {
  const out: { port: number; mode: 'tls' | 'starttls' }[] = [];
  for (const pair of s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [port = '', mode = '', extra] = pair.split(':').map((p) => p.trim());
    const n = Number(port);
    if (!/^\d{1,5}$/.test(port) || n > 65535 || (mode !== 'tls' && mode !== 'starttls') || extra !== undefined) {
      ctx.addIssue({ code: 'custom', message: `"${pair}" is not port:tls or port:starttls` });
      return z.NEVER;
    }
    if (n !== 0 && out.some((l) => l.port === n)) {
      ctx.addIssue({ code: 'custom', message: `port ${n} is listed twice` });
      return z.NEVER;
    }
    out.push({ port: n, mode });
  }
  if (out.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'must list at least one port:mode' });
    return z.NEVER;
  }
  return out;
});
