import { HeraldError } from '@herald/core';
import { asciiDomainName, validateCreateDomain, validateUpdateDomain } from './domain-input.validation';
import { validateDomainListQuery } from './domain-query.validation';

const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'];
const create = (body: unknown) => validateCreateDomain(body, REGIONS);
const failure = (run: () => unknown): { code: string; message: string } => {
  try {
    run();
  } catch (error) {
    if (error instanceof HeraldError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a HeraldError');
};

describe('asciiDomainName', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Mail.Example.COM ', 'mail.example.com'],
    ['example.com.', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['a-b.c-d.example.org', 'a-b.c-d.example.org'],
  ])('%j → %j', (input, expected) => expect(asciiDomainName(input)).toBe(expected));

  it.each([
    '',
    'localhost',
    'example',
    'exa mple.com',
    '-bad.com',
    'bad-.com',
    'a..com',
    '_dmarc.example.com',
    '1.2.3.4',
    'example.c0m',
    `${'a'.repeat(64)}.com`,
    // Fits DNS, but `<selector>._domainkey.<name>` would not.
    `${'a.'.repeat(114)}com`,
  ])('refuses %j', (input) => expect(asciiDomainName(input)).toBeNull());
});

describe('validateCreateDomain', () => {
  const ok = { name: 'example.com' };

  it('fills in the defaults: no region (the team decides), return path `send`, no tracking, opportunistic TLS, RSA', () => {
    expect(create({ name: 'Example.com' })).toEqual({
      name: 'example.com',
      region: null,
      customReturnPath: 'send',
      openTracking: false,
      clickTracking: false,
      trackingSubdomain: null,
      tls: 'opportunistic',
      dkimAlgorithms: ['rsa-sha256'],
    });
  });

  it('reads every field, lowercasing labels, and ignores unknown ones', () => {
    expect(
      create({
        name: 'bücher.example',
        region: 'eu-west-1',
        custom_return_path: 'Bounces',
        open_tracking: true,
        click_tracking: true,
        tracking_subdomain: 'Links',
        tls: 'enforced',
        capabilities: { sending: 'enabled', receiving: 'disabled' },
        dkim_algorithms: ['ed25519-sha256', 'rsa-sha256'],
        unknown: 1,
      }),
    ).toEqual({
      name: 'xn--bcher-kva.example',
      region: 'eu-west-1',
      customReturnPath: 'bounces',
      openTracking: true,
      clickTracking: true,
      trackingSubdomain: 'links',
      tls: 'enforced',
      dkimAlgorithms: ['rsa-sha256', 'ed25519-sha256'],
    });
  });

  it.each<[string, unknown, string, RegExp]>([
    ['no body', undefined, 'missing_required_field', /^Missing `name` field\.$/],
    ['no name', { region: 'us-east-1' }, 'missing_required_field', /`name`/],
    ['a blank name', { name: '  ' }, 'missing_required_field', /`name`/],
    ['an array body', [{ name: 'example.com' }], 'validation_error', /JSON object/],
    ['a name that is not a string', { name: 42 }, 'validation_error', /`name` field must be a `string`/],
    ['a name that is not a domain', { name: 'not a domain' }, 'validation_error', /Invalid `name` field/],
    ['an unknown region', { ...ok, region: 'mars' }, 'invalid_region', /`us-east-1` \| `eu-west-1` \| `sa-east-1` \| `ap-northeast-1`/],
    ['a region that is not a string', { ...ok, region: 1 }, 'invalid_region', /Region must be one of/],
    ['a return path that is not a label', { ...ok, custom_return_path: 'a.b' }, 'validation_error', /`custom_return_path`/],
    ['a tracking subdomain that is not a label', { ...ok, tracking_subdomain: '_x' }, 'validation_error', /`tracking_subdomain`/],
    ['tracking on the return path', { ...ok, tracking_subdomain: 'send' }, 'validation_error', /must differ/],
    ['a non-boolean open_tracking', { ...ok, open_tracking: 'yes' }, 'validation_error', /`open_tracking` field must be a `boolean`/],
    ['a non-boolean click_tracking', { ...ok, click_tracking: 1 }, 'validation_error', /`click_tracking`/],
    ['an unknown tls', { ...ok, tls: 'always' }, 'validation_error', /`tls` field must be `opportunistic` \| `enforced`/],
    ['receiving', { ...ok, capabilities: { receiving: 'enabled' } }, 'validation_error', /Receiving is not supported/],
    ['no sending', { ...ok, capabilities: { sending: 'disabled' } }, 'validation_error', /capabilities.sending/],
    ['Ed25519 alone', { ...ok, dkim_algorithms: ['ed25519-sha256'] }, 'validation_error', /`dkim_algorithms`/],
    ['an unknown algorithm', { ...ok, dkim_algorithms: ['rsa-sha1'] }, 'validation_error', /`dkim_algorithms`/],
    ['no algorithm', { ...ok, dkim_algorithms: [] }, 'validation_error', /`dkim_algorithms`/],
  ])('refuses %s', (_, body, code, message) => {
    const error = failure(() => create(body));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it('treats null as absent, as JSON clients send for unset options', () => {
    expect(create({ name: 'example.com', region: null, tls: null, tracking_subdomain: null, open_tracking: null })).toMatchObject({
      region: null,
      tls: 'opportunistic',
      trackingSubdomain: null,
      openTracking: false,
    });
  });
});

describe('validateUpdateDomain', () => {
  const current = { name: 'example.com', region: 'us-east-1', customReturnPath: 'send', trackingSubdomain: 'links' };

  it('returns only what changes', () => {
    expect(validateUpdateDomain({ open_tracking: true, tls: 'enforced', tracking_subdomain: 'Clicks' }, current)).toEqual({
      openTracking: true,
      tls: 'enforced',
      trackingSubdomain: 'clicks',
    });
    expect(validateUpdateDomain({ tracking_subdomain: 'links', click_tracking: false }, current)).toEqual({ clickTracking: false });
    expect(validateUpdateDomain(undefined, current)).toEqual({});
  });

  it('accepts the fixed fields when they repeat the current values', () => {
    const same = { name: 'Example.com', region: 'us-east-1', custom_return_path: 'SEND', capabilities: { sending: 'enabled' } };
    expect(validateUpdateDomain(same, current)).toEqual({});
  });

  it.each<[string, unknown, RegExp]>([
    ['another region', { region: 'eu-west-1' }, /`region` of a domain cannot be changed/],
    ['another name', { name: 'other.com' }, /`name` of a domain cannot be changed/],
    ['another return path', { custom_return_path: 'bounces' }, /`custom_return_path` of a domain cannot be changed/],
    ['DKIM algorithms', { dkim_algorithms: ['rsa-sha256'] }, /`dkim_algorithms`/],
    ['removing the tracking subdomain', { tracking_subdomain: null }, /can be changed but not removed/],
    ['an empty tracking subdomain', { tracking_subdomain: '' }, /can be changed but not removed/],
    ['tracking on the return path', { tracking_subdomain: 'send' }, /must differ/],
    ['a bad tls', { tls: 'sometimes' }, /`tls`/],
    ['a body that is not an object', 'open', /JSON object/],
  ])('refuses %s', (_, body, message) => {
    const error = failure(() => validateUpdateDomain(body, current));
    expect(error).toEqual({ code: 'validation_error', message: expect.stringMatching(message) });
  });

  it('lets a domain without a tracking subdomain send null for it', () => {
    expect(validateUpdateDomain({ tracking_subdomain: null }, { ...current, trackingSubdomain: null })).toEqual({});
  });
});

describe('validateDomainListQuery', () => {
  const id = '4ef9a417-02e9-4d39-ad75-9611e0fcc33c';

  it('is null (every domain) without limit or cursor, a page otherwise', () => {
    expect(validateDomainListQuery({})).toBeNull();
    expect(validateDomainListQuery(undefined)).toBeNull();
    expect(validateDomainListQuery({ limit: '5' })).toEqual({ limit: 5, after: null, before: null });
    expect(validateDomainListQuery({ after: id.toUpperCase() })).toEqual({ limit: 20, after: id, before: null });
  });

  it.each<[unknown, string]>([
    [{ limit: '0' }, 'validation_error'],
    [{ limit: '101' }, 'validation_error'],
    [{ limit: 'ten' }, 'validation_error'],
    [{ after: 'nope' }, 'invalid_parameter'],
    [{ after: id, before: id }, 'validation_error'],
  ])('refuses %j', (query, code) => expect(failure(() => validateDomainListQuery(query)).code).toBe(code));
});
