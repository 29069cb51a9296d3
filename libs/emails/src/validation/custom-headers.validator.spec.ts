import { validateSendRequest } from './send-request.validator';
import { errorOf, LIMITS, NOW, validEmail, valueOf } from './validation.fixture';

const withHeaders = (headers: unknown) => validateSendRequest(validEmail({ headers }), LIMITS, NOW);
const invalid = (message: string) => ({ code: 'validation_error', message: `Invalid \`headers\` field. ${message}` });

describe('custom headers', () => {
  it('passes valid headers through unchanged', () => {
    const headers = {
      'X-Entity-Ref-ID': '123',
      'List-Unsubscribe': '<https://acme.com/u/1>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Tabbed': 'a\tb',
      'X-Unicode': 'Grüße',
      'X-Empty': '',
    };
    expect(valueOf(withHeaders(headers)).headers).toEqual(headers);
    expect(valueOf(withHeaders({})).headers).toEqual({});
  });

  it.each(['X-A\r\nBcc: victim@x.com', 'a\nb', 'a\rb', 'nul\u0000', 'esc\u001b', 'del\u007f', 'nel\u0085'])(
    'rejects a value with line breaks or controls (%j)',
    (value) => {
      expect(errorOf(withHeaders({ 'X-Note': value }))).toEqual(
        invalid('The value of the `X-Note` header must not contain line breaks or control characters.'),
      );
    },
  );

  it.each(['X Note', 'X-Note:', '', 'Ünïcode', 'X-\r\nBcc'])('rejects the header name %j', (name) => {
    expect(errorOf(withHeaders({ [name]: 'v' }))).toEqual(
      invalid(`\`${name}\` is not a valid header name: use printable ASCII without spaces or colons.`),
    );
  });

  it('rejects a header name too long for a line of 998 octets, and takes one of 921 characters', () => {
    expect(errorOf(withHeaders({ [`X-${'n'.repeat(920)}`]: 'v' }))).toEqual(
      invalid('A header name must be at most 921 characters (RFC 5322 limits a line to 998).'),
    );
    expect(valueOf(withHeaders({ [`X-${'n'.repeat(919)}`]: 'v' })).headers).toEqual({ [`X-${'n'.repeat(919)}`]: 'v' });
  });

  it.each([
    ['Subject', 'subject'],
    ['from', 'from'],
    ['TO', 'to'],
    ['Cc', 'cc'],
    ['bcc', 'bcc'],
    ['Reply-To', 'reply_to'],
  ])('refuses %s, pointing to the `%s` field', (name, field) => {
    expect(errorOf(withHeaders({ [name]: 'x' }))).toEqual(invalid(`The \`${name}\` header is set by Herald; use the \`${field}\` field instead.`));
  });

  it.each(['Date', 'message-id', 'Content-Type', 'MIME-Version', 'Content-Transfer-Encoding', 'DKIM-Signature', 'Return-Path'])(
    'refuses %s, which only Herald sets',
    (name) => {
      expect(errorOf(withHeaders({ [name]: 'x' }))).toEqual(invalid(`The \`${name}\` header is set by Herald and cannot be overridden.`));
    },
  );

  it('refuses the same header twice in different case', () => {
    expect(errorOf(withHeaders({ 'X-Ref': '1', 'x-ref': '2' }))).toEqual(invalid('The `x-ref` header is given more than once.'));
  });

  it('requires string values and an object', () => {
    expect(errorOf(withHeaders({ 'X-Count': 3 }))).toEqual(invalid('The value of the `X-Count` header must be a `string`.'));
    for (const headers of [[['X-A', '1']], 'X-A: 1']) {
      expect(errorOf(withHeaders(headers))).toEqual({
        code: 'validation_error',
        message: 'The `headers` field must be an object of header names to `string` values.',
      });
    }
  });
});
