import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { HeraldError, type HeraldErrorCode } from '@herald/core';
import { checkedFirst, fail, isAbsent, isPlainObject, jsonBody, mustBe, optional, parseOrThrow } from '@herald/http';
import type { DkimAlgorithm, Domain, DomainTls } from './domain.types';
import type { DomainChanges } from './domains.repository';

/*
 * The bodies of POST /domains and PATCH /domains/:id, checked the way Resend reports problems:
 * one at a time, `missing_required_field` for an absent name, `invalid_region` for a region
 * this deployment does not run, `validation_error` for anything else. Unknown fields are ignored.
 */

export interface CreateDomainInput {
  /** Lowercased ASCII (punycode): the form the send path compares `from` domains in. */
  name: string;
  /** Null: the team's home region. */
  region: string | null;
  customReturnPath: string;
  openTracking: boolean;
  clickTracking: boolean;
  trackingSubdomain: string | null;
  tls: DomainTls;
  /** RSA always; Ed25519 beside it on request (RFC 8463 dual signing). */
  dkimAlgorithms: DkimAlgorithm[];
}

export type UpdateDomainInput = Pick<DomainChanges, 'openTracking' | 'clickTracking' | 'tls' | 'trackingSubdomain'>;

export const DEFAULT_RETURN_PATH = 'send';
export const DKIM_ALGORITHM_CHOICES = [['rsa-sha256'], ['rsa-sha256', 'ed25519-sha256']] as const;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TOP_LEVEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
/** The longest record name Herald publishes, `h20261125r7kq2._domainkey.<name>`, must fit DNS's 253. */
const MAX_NAME = 253 - 'h20261125r7kq2._domainkey.'.length;

/** `Example.COM`, `bücher.example` → `example.com`, `xn--bcher-kva.example`; null when it is not a domain name. */
export function asciiDomainName(value: string): string | null {
  const input = value.trim().replace(/\.$/, '');
  if (input === '' || /\s/.test(input)) return null;
  // domainToASCII lowercases, maps Unicode to punycode and returns '' for what IDNA rejects.
  const ascii = domainToASCII(input);
  if (ascii === '' || ascii.length > MAX_NAME) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !TOP_LEVEL.test(labels[labels.length - 1] ?? '')) return null;
  return labels.every((label) => LABEL.test(label)) ? ascii : null;
}

const invalid = (message: string, code: HeraldErrorCode = 'validation_error') => new HeraldError(code, message);

// Documentation (`meta`) goes on the inner schema: JSON Schema output reads it there, through optional().
type Meta = Record<string, unknown>;
const boolean = (field: string, meta: Meta = {}) => optional(z.boolean({ error: mustBe(field, 'a `boolean`') }).meta(meta));

const LABEL_MESSAGE = 'a subdomain label: letters, digits and hyphens, at most 63 characters, like `links`';
/** A subdomain label, lowercased; absent is null. */
const label = (field: string, meta: Meta = {}) =>
  optional(
    z
      .string({ error: mustBe(field, LABEL_MESSAGE) })
      .transform((value) => value.trim().toLowerCase())
      .refine((value) => LABEL.test(value), { error: mustBe(field, LABEL_MESSAGE) })
      .meta({ pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$', maxLength: 63, example: 'links', ...meta }),
  ).transform((value) => value ?? null);

const TLS_VALUES = ['opportunistic', 'enforced'] as const;
const tls = (meta: Meta = {}) =>
  optional(
    z.enum(TLS_VALUES, { error: mustBe('tls', '`opportunistic` | `enforced`') }).meta({
      description: '`opportunistic`: TLS when the receiving server offers it. `enforced`: never deliver without TLS.',
      ...meta,
    }),
  );

const SWITCH = ['enabled', 'disabled'] as const;
/** Herald domains send; receiving is not built. Resend's field is accepted when it asks for that. */
const capabilities = optional(
  z.object(
    {
      sending: optional(z.enum(SWITCH, { error: mustBe('capabilities.sending', '`enabled` | `disabled`') })),
      receiving: optional(z.enum(SWITCH, { error: mustBe('capabilities.receiving', '`enabled` | `disabled`') })),
    },
    { error: mustBe('capabilities', 'an object') },
  ),
)
  .transform((value, ctx): undefined => {
    if (value?.receiving === 'enabled') return fail(ctx, 'Receiving is not supported: `capabilities.receiving` must be `disabled`.');
    if (value?.sending === 'disabled') return fail(ctx, 'A Herald domain sends: `capabilities.sending` must be `enabled`.');
    return undefined;
  })
  .meta({ description: 'Herald domains send; receiving is not supported.', example: { sending: 'enabled', receiving: 'disabled' } });

const DKIM_MESSAGE = mustBe('dkim_algorithms', '`["rsa-sha256"]` or `["rsa-sha256", "ed25519-sha256"]` (Ed25519 signs beside RSA, never alone)');
const dkimAlgorithms = optional(
  z
    .array(z.enum(['rsa-sha256', 'ed25519-sha256'], { error: DKIM_MESSAGE }), { error: DKIM_MESSAGE })
    .min(1, { error: DKIM_MESSAGE })
    .meta({
      default: ['rsa-sha256'],
      description:
        'Herald extension. `["rsa-sha256", "ed25519-sha256"]` adds an Ed25519 key (RFC 8463) beside the RSA-2048 key: ' +
        'mail then carries both signatures. Ed25519 alone is not offered, since many receivers verify only RSA.',
    }),
).transform((value, ctx): DkimAlgorithm[] => {
  if (value === undefined) return ['rsa-sha256'];
  const chosen = new Set(value);
  const match = DKIM_ALGORITHM_CHOICES.find((choice) => choice.length === chosen.size && choice.every((a) => chosen.has(a)));
  return match ? [...match] : fail(ctx, DKIM_MESSAGE);
});

const domainName = checkedFirst(
  (value, ctx) => {
    if (isAbsent(value) || (typeof value === 'string' && value.trim() === '')) fail(ctx, 'Missing `name` field.', 'missing_required_field');
  },
  z
    .string({ error: mustBe('name', 'a `string`') })
    .transform((value, ctx) => asciiDomainName(value) ?? fail(ctx, 'Invalid `name` field. It must be a domain name like `example.com`.'))
    .meta({ description: 'A domain or subdomain; Unicode names are stored in punycode.', example: 'example.com' }),
);

/** A body that may be absent altogether (an empty object), else must be a JSON object. */
const bodyOf = <S extends z.ZodType>(schema: S) => z.preprocess((body) => (isAbsent(body) ? {} : body), jsonBody(schema));

/** How a region is named (`us-east-1`), as HERALD_REGIONS requires. */
const REGION_NAME = /^[a-z]{2}-[a-z]+-\d$/;

/** The body of POST /domains; `regions` are the deployment's (HERALD_REGIONS). */
export function createDomainBody(regions: readonly string[]) {
  const regionList = regions.map((r) => `\`${r}\``).join(' | ');
  const region = optional(
    checkedFirst(
      (value, ctx) => {
        if (!(typeof value === 'string' && regions.includes(value))) {
          // A region's name this deployment does not serve: nothing would deliver the domain's mail.
          const unserved = typeof value === 'string' && REGION_NAME.test(value) ? ` No worker delivers mail for \`${value}\` here.` : '';
          fail(ctx, `Invalid \`region\` field.${unserved} Region must be one of ${regionList}.`, 'invalid_region');
        }
      },
      z.enum(regions as [string, ...string[]]),
    ),
  )
    .transform((value) => value ?? null)
    .meta({ description: "Where the domain's mail is sent from. Defaults to the team's home region; cannot be changed later." });
  return bodyOf(
    z.object({
      name: domainName,
      region,
      custom_return_path: label('custom_return_path', {
        default: DEFAULT_RETURN_PATH,
        description: 'The subdomain used for the Return-Path (SPF and bounces).',
        example: DEFAULT_RETURN_PATH,
      }),
      open_tracking: boolean('open_tracking', { default: false }),
      click_tracking: boolean('click_tracking', { default: false }),
      tracking_subdomain: label('tracking_subdomain', {
        description: 'A subdomain for open and click tracking links (a CNAME). Can be changed, not removed.',
      }),
      tls: tls({ default: 'opportunistic' }),
      capabilities,
      dkim_algorithms: dkimAlgorithms,
    }),
  )
    .transform((body, ctx): CreateDomainInput => {
      const customReturnPath = body.custom_return_path ?? DEFAULT_RETURN_PATH;
      if (body.tracking_subdomain === customReturnPath) return fail(ctx, sameNameMessage(customReturnPath));
      return {
        name: body.name,
        region: body.region,
        customReturnPath,
        openTracking: body.open_tracking ?? false,
        clickTracking: body.click_tracking ?? false,
        trackingSubdomain: body.tracking_subdomain,
        tls: body.tls ?? 'opportunistic',
        dkimAlgorithms: body.dkim_algorithms,
      };
    })
    .meta({ example: { name: 'mail.example.com', region: regions[0], open_tracking: false, click_tracking: false, tls: 'opportunistic' } });
}

/** A CNAME cannot share its name with the return path's MX and TXT records. */
const sameNameMessage = (name: string) => `The \`tracking_subdomain\` and \`custom_return_path\` must differ: both are \`${name}\`.`;

export function validateCreateDomain(body: unknown, regions: readonly string[]): CreateDomainInput {
  return parseOrThrow(createDomainBody(regions), body);
}

/** The body of PATCH /domains/:id, once the fixed fields are checked against the domain (below). */
export const updateDomainBody = bodyOf(
  z.object({
    open_tracking: boolean('open_tracking'),
    click_tracking: boolean('click_tracking'),
    tracking_subdomain: label('tracking_subdomain', { description: 'A new tracking subdomain; it cannot be removed.' }),
    tls: tls(),
    capabilities,
  }),
).meta({
  description: 'The name, region, return path and DKIM algorithms are fixed at creation.',
  example: { open_tracking: true, click_tracking: true, tracking_subdomain: 'links' },
});

/**
 * PATCH: tracking and TLS settings. The name, region, return path and DKIM algorithms are fixed
 * at creation (their DNS records depend on them): sending another value is refused rather than
 * ignored. A tracking subdomain can be changed, never removed, as at Resend.
 */
export function validateUpdateDomain(
  body: unknown,
  current: Pick<Domain, 'name' | 'region' | 'customReturnPath' | 'trackingSubdomain'>,
): UpdateDomainInput {
  const fields = isAbsent(body) ? {} : body;
  if (!isPlainObject(fields)) throw invalid('The request body must be a JSON object.');
  const changed = (field: string, now: string, normalize = (v: string) => v) => {
    const value = fields[field];
    return !isAbsent(value) && (typeof value !== 'string' || normalize(value) !== now);
  };
  if (changed('name', current.name, (v) => asciiDomainName(v) ?? v)) throw invalid('The `name` of a domain cannot be changed.');
  if (changed('region', current.region)) {
    throw invalid('The `region` of a domain cannot be changed. Delete the domain and add it again in the new region.');
  }
  if (changed('custom_return_path', current.customReturnPath, (v) => v.trim().toLowerCase())) {
    throw invalid('The `custom_return_path` of a domain cannot be changed. Delete the domain and add it again.');
  }
  if (!isAbsent(fields['dkim_algorithms'])) throw invalid('The `dkim_algorithms` of a domain are chosen when it is added.');
  const tracking = fields['tracking_subdomain'];
  if (current.trackingSubdomain !== null && 'tracking_subdomain' in fields && (isAbsent(tracking) || tracking === '')) {
    throw invalid('The `tracking_subdomain` field can be changed but not removed.');
  }
  const parsed = parseOrThrow(updateDomainBody, fields);
  if (parsed.tracking_subdomain === current.customReturnPath) throw invalid(sameNameMessage(current.customReturnPath));
  const changes: UpdateDomainInput = {};
  if (!isAbsent(parsed.open_tracking)) changes.openTracking = parsed.open_tracking;
  if (!isAbsent(parsed.click_tracking)) changes.clickTracking = parsed.click_tracking;
  if (!isAbsent(parsed.tls)) changes.tls = parsed.tls;
  if (parsed.tracking_subdomain !== null && parsed.tracking_subdomain !== current.trackingSubdomain) {
    changes.trackingSubdomain = parsed.tracking_subdomain;
  }
  return changes;
}
