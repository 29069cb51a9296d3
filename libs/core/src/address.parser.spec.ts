import fc from 'fast-check';
import { addressDomain, addressKey, formatAddress, isValidAddrSpec, parseAddress } from './address.parser';

describe('parseAddress', () => {
  it.each([
    ['hi@acme.com', null, 'hi@acme.com'],
    ['  hi@acme.com  ', null, 'hi@acme.com'],
    ['Acme <hi@acme.com>', 'Acme', 'hi@acme.com'],
    ['Acme Inc.<hi@acme.com>', 'Acme Inc.', 'hi@acme.com'],
    ['"Doe, John" <john@acme.com>', 'Doe, John', 'john@acme.com'],
    ['"Say \\"hi\\" \\\\ bye" <a@b.io>', 'Say "hi" \\ bye', 'a@b.io'],
    ['<hi@acme.com>', null, 'hi@acme.com'],
    ['"" <hi@acme.com>', null, 'hi@acme.com'],
    ['Jürgen Müller <j@acme.de>', 'Jürgen Müller', 'j@acme.de'],
    ['Acme (Support) < hi@acme.com >', 'Acme (Support)', 'hi@acme.com'],
    ['first.last+tag@sub.example.co.uk', null, 'first.last+tag@sub.example.co.uk'],
    ["o'brien@example.org", null, "o'brien@example.org"],
    ['user@bücher.de', null, 'user@bücher.de'],
    ['user@xn--bcher-kva.de', null, 'user@xn--bcher-kva.de'],
    ['user@例え.テスト', null, 'user@例え.テスト'],
    ['USER@EXAMPLE.COM', null, 'USER@EXAMPLE.COM'],
    ['hi@acme.com <hi@acme.com>', 'hi@acme.com', 'hi@acme.com'],
  ])('accepts %s', (input, display, address) => {
    expect(parseAddress(input)).toEqual({ display, address });
  });

  it.each([
    [''],
    ['plainaddress'],
    ['@acme.com'],
    ['hi@'],
    ['hi@acme'],
    ['hi@acme.c'],
    ['hi@acme.123'],
    ['hi@-acme.com'],
    ['hi@acme-.com'],
    ['hi@ac_me.com'],
    ['hi@acme..com'],
    ['hi@acme.com.'],
    ['hi@[127.0.0.1]'],
    ['.hi@acme.com'],
    ['hi.@acme.com'],
    ['h..i@acme.com'],
    ['h i@acme.com'],
    ['"h i"@acme.com'],
    ['hï@acme.com'],
    ['a@b@acme.com'],
    ['hi@acme.com, ho@acme.com'],
    ['Doe, John <john@acme.com>'],
    ['Acme: <hi@acme.com>'],
    ['Acme <hi@acme.com'],
    ['Acme hi@acme.com'],
    ['Acme <hi@acme.com> trailing'],
    ['"Acme <hi@acme.com>'],
    ['"Acme" extra <hi@acme.com>'],
    ['Ac\r\nBcc: x@evil.com <hi@acme.com>'],
    ['"Ac\r\nme" <hi@acme.com>'],
    ['Acme <<hi@acme.com>>'],
    ['hi@xn--zz.com'],
  ])('rejects %j', (input) => {
    expect(parseAddress(input)).toBeNull();
  });

  it('enforces the RFC 5321 lengths (local part 64, address 254)', () => {
    const domain = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.com`; // 195 chars
    expect(isValidAddrSpec(`${'x'.repeat(64)}@example.com`)).toBe(true);
    expect(isValidAddrSpec(`${'x'.repeat(65)}@example.com`)).toBe(false);
    expect(isValidAddrSpec(`${'x'.repeat(58)}@${domain}`)).toBe(true); // 254
    expect(isValidAddrSpec(`${'x'.repeat(59)}@${domain}`)).toBe(false); // 255
    expect(isValidAddrSpec(`x@${'a'.repeat(64)}.com`)).toBe(false); // label > 63
  });
});

describe('addressDomain and addressKey', () => {
  it('gives the lowercased ASCII domain, so Unicode and punycode spellings match', () => {
    expect(addressDomain('hi@Acme.COM')).toBe('acme.com');
    expect(addressDomain('hi@Bücher.de')).toBe('xn--bcher-kva.de');
    expect(addressKey('Hi@Bücher.DE')).toBe(addressKey('hi@xn--bcher-kva.de'));
  });
});

describe('formatAddress', () => {
  it('writes a phrase bare and quotes anything else', () => {
    expect(formatAddress({ display: null, address: 'a@b.io' })).toBe('a@b.io');
    expect(formatAddress({ display: 'Acme Inc.', address: 'a@b.io' })).toBe('Acme Inc. <a@b.io>');
    expect(formatAddress({ display: 'Doe, John', address: 'a@b.io' })).toBe('"Doe, John" <a@b.io>');
    expect(formatAddress({ display: 'Say "hi"', address: 'a@b.io' })).toBe('"Say \\"hi\\"" <a@b.io>');
  });
});

describe('address round trip (property)', () => {
  const displayName = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
    .map((s) => s.trim())
    .filter((s) => s !== '' && !/\p{Cc}/u.test(s));

  it('parseAddress(formatAddress(x)) gives x back for any name and valid address', () => {
    fc.assert(
      fc.property(fc.option(displayName, { nil: null }), fc.emailAddress(), (display, address) => {
        expect(parseAddress(formatAddress({ display, address }))).toEqual({ display, address });
      }),
      { numRuns: 500 },
    );
  });

  it('formatting a parsed address is stable for arbitrary input', () => {
    const mailboxLike = fc.oneof(
      fc.string(),
      fc.tuple(fc.string(), fc.emailAddress()).map(([name, address]) => `${name} <${address}>`),
      fc.tuple(fc.string(), fc.emailAddress()).map(([name, address]) => `"${name}" <${address}>`),
    );
    fc.assert(
      fc.property(mailboxLike, (input) => {
        const parsed = parseAddress(input);
        if (parsed) expect(parseAddress(formatAddress(parsed))).toEqual(parsed);
      }),
      { numRuns: 500 },
    );
  });
});
