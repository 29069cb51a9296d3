import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { HeraldError, type HeraldErrorCode } from '@herald/core';
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

const isAbsent = (value: unknown): value is null | undefined => value === undefined || value === null;
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const mustBe = (field: string, what: string) => `The \`${field}\` field must be ${what}.`;
const invalid = (message: string, code: HeraldErrorCode = 'validation_error') => new HeraldError(code, message);

function fail(ctx: z.RefinementCtx, message: string, code: HeraldErrorCode = 'validation_error'): never {
  ctx.addIssue({ code: 'custom', message, params: { heraldCode: code } });
  return z.NEVER;
}

/** The first problem zod found, as the HeraldError it stands for. */
function orThrow<T>(result: z.ZodSafeParseResult<T>): T {
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const code: unknown = issue?.code === 'custom' ? issue.params?.['heraldCode'] : undefined;
  // Only `fail` sets heraldCode, always with a HeraldErrorCode.
  const name = typeof code === 'string' ? (code as HeraldErrorCode) : 'validation_error';
  throw invalid(issue?.message ?? 'The request body is invalid.', name);
}

const boolean = (field: string) => z.boolean({ error: mustBe(field, 'a `boolean`') }).nullish();

const label = (field: string) =>
  z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      if (isAbsent(value)) return null;
      const text = typeof value === 'string' ? value.trim().toLowerCase() : null;
      if (text === null || !LABEL.test(text)) {
        return fail(ctx, mustBe(field, 'a subdomain label: letters, digits and hyphens, at most 63 characters, like `links`'));
      }
      return text;
    });

const TLS_VALUES = ['opportunistic', 'enforced'] as const;
const tls = z.enum(TLS_VALUES, { error: mustBe('tls', '`opportunistic` | `enforced`') }).nullish();

/** Herald domains send; receiving is not built. Resend's field is accepted when it asks for that. */
const capabilities = z.unknown().optional().transform((value, ctx) => {
  if (isAbsent(value)) return;
  if (!isPlainObject(value)) return fail(ctx, mustBe('capabilities', 'an object'));
  for (const key of ['sending', 'receiving'] as const) {
    const v = value[key];
    if (!isAbsent(v) && v !== 'enabled' && v !== 'disabled') return fail(ctx, mustBe(`capabilities.${key}`, '`enabled` | `disabled`'));
  }
  if (value['receiving'] === 'enabled') return fail(ctx, 'Receiving is not supported: `capabilities.receiving` must be `disabled`.');
  if (value['sending'] === 'disabled') return fail(ctx, 'A Herald domain sends: `capabilities.sending` must be `enabled`.');
});

const DKIM_MESSAGE = mustBe(
  'dkim_algorithms',
  '`["rsa-sha256"]` or `["rsa-sha256", "ed25519-sha256"]` (Ed25519 signs beside RSA, never alone)',
);
const dkimAlgorithms = z.unknown().optional().transform((value, ctx): DkimAlgorithm[] => {
  if (isAbsent(value)) return ['rsa-sha256'];
  if (!Array.isArray(value) || value.length === 0) return fail(ctx, DKIM_MESSAGE);
  const chosen = new Set(value);
  const match = DKIM_ALGORITHM_CHOICES.find((choice) => choice.length === chosen.size && choice.every((a) => chosen.has(a)));
  return match ? [...match] : fail(ctx, DKIM_MESSAGE);
});

function createSchema(regions: readonly string[]) {
  const regionList = regions.map((r) => `\`${r}\``).join(' | ');
  return z
    .object({
      name: z.unknown().optional().transform((value, ctx) => {
        if (typeof value !== 'string') return fail(ctx, mustBe('name', 'a `string`'));
        return asciiDomainName(value) ?? fail(ctx, 'Invalid `name` field. It must be a domain name like `example.com`.');
      }),
      region: z.unknown().optional().transform((value, ctx) => {
        if (isAbsent(value)) return null;
        if (typeof value === 'string' && regions.includes(value)) return value;
        return fail(ctx, `Invalid \`region\` field. Region must be one of ${regionList}.`, 'invalid_region');
      }),
      custom_return_path: label('custom_return_path'),
      open_tracking: boolean('open_tracking'),
      click_tracking: boolean('click_tracking'),
      tracking_subdomain: label('tracking_subdomain'),
      tls,
      capabilities,
      dkim_algorithms: dkimAlgorithms,
    })
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
    });
}

/** A CNAME cannot share its name with the return path's MX and TXT records. */
const sameNameMessage = (name: string) =>
  `The \`tracking_subdomain\` and \`custom_return_path\` must differ: both are \`${name}\`.`;

export function validateCreateDomain(body: unknown, regions: readonly string[]): CreateDomainInput {
  const fields = isAbsent(body) ? {} : body;
  if (!isPlainObject(fields)) throw invalid('The request body must be a JSON object.');
  if (isAbsent(fields['name']) || (typeof fields['name'] === 'string' && fields['name'].trim() === '')) {
    throw invalid('Missing `name` field.', 'missing_required_field');
  }
  return orThrow(createSchema(regions).safeParse(fields));
}

const updateSchema = z.object({
  open_tracking: boolean('open_tracking'),
  click_tracking: boolean('click_tracking'),
  tracking_subdomain: label('tracking_subdomain'),
  tls,
  capabilities,
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
  const parsed = orThrow(updateSchema.safeParse(fields));
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
