import { validateSendRequest } from './send-request.validator';
import { errorOf, LIMITS, NOW, validEmail, valueOf } from './validation.fixture';

const withAttachments = (attachments: unknown) => validateSendRequest(validEmail({ attachments }), LIMITS, NOW);
const attachment = (fields: Record<string, unknown>) => valueOf(withAttachments([fields])).attachments[0];
const failure = (fields: unknown) => errorOf(withAttachments([fields]));

describe('attachments: accepted forms', () => {
  const hello = Buffer.from('hello');

  it.each([
    ['base64', hello.toString('base64')],
    ['base64 with line breaks and no padding', 'aGVs\r\nbG8'],
    ['URL-safe base64', Buffer.from([0xfb, 0xff]).toString('base64url')],
    ['an array of bytes', [...hello]],
    ['a serialized Buffer', JSON.parse(JSON.stringify(hello)) as unknown],
  ])('decodes content given as %s', (_, content) => {
    const decoded = attachment({ content, filename: 'a.txt' });
    expect(decoded.content).toBeInstanceOf(Buffer);
    expect(decoded.size).toBe(decoded.content?.length);
    if (_ !== 'URL-safe base64') expect(decoded.content).toEqual(hello);
  });

  it('normalizes a content attachment, deriving the type from the filename', () => {
    expect(attachment({ content: 'aGk=', filename: 'Invoice.PDF', content_id: 'logo-1' })).toEqual({
      filename: 'Invoice.PDF',
      contentType: 'application/pdf',
      contentId: 'logo-1',
      path: null,
      content: Buffer.from('hi'),
      size: 2,
    });
  });

  it('keeps an explicit content_type and falls back to application/octet-stream', () => {
    expect(attachment({ content: 'aGk=', filename: 'a.pdf', content_type: ' text/plain; charset=utf-8 ' }).contentType).toBe(
      'text/plain; charset=utf-8',
    );
    expect(attachment({ content: 'aGk=', filename: 'a.unknownext' }).contentType).toBe('application/octet-stream');
    expect(attachment({ content: 'aGk=' }).contentType).toBe('application/octet-stream');
  });

  it('normalizes a remote attachment, leaving an unknown type to the fetch', () => {
    expect(attachment({ path: 'https://cdn.acme.com/files/report.csv?sig=1' })).toEqual({
      filename: null,
      contentType: 'text/csv',
      contentId: null,
      path: 'https://cdn.acme.com/files/report.csv?sig=1',
      content: null,
      size: 0,
    });
    expect(attachment({ path: 'http://cdn.acme.com/download' }).contentType).toBeNull();
  });

  it('treats a null or absent list as no attachments', () => {
    expect(valueOf(withAttachments(null)).attachments).toEqual([]);
    expect(valueOf(validateSendRequest(validEmail(), LIMITS, NOW)).attachments).toEqual([]);
  });
});

describe('attachments: rejected forms', () => {
  const need = 'Attachment must have either a `content` or `path`.';

  it('needs a content or a path (invalid_attachment), naming the index', () => {
    expect(failure({ filename: 'a.pdf' })).toEqual({ code: 'invalid_attachment', message: `Invalid \`attachments[0]\` field. ${need}` });
    expect(failure({ content: '', path: '' })?.message).toBe(`Invalid \`attachments[0]\` field. ${need}`);
    expect(errorOf(withAttachments([{ content: 'aGk=' }, { content: null }]))?.message).toBe(`Invalid \`attachments[1]\` field. ${need}`);
  });

  it('refuses both a content and a path', () => {
    expect(failure({ content: 'aGk=', path: 'https://x.io/a.pdf' })).toEqual({
      code: 'invalid_attachment',
      message: 'Invalid `attachments[0]` field. Attachment must have either a `content` or `path`, not both.',
    });
  });

  it.each([
    [{ content: 'not base64!' }, 'Invalid `attachments[0].content` field. The content is not valid base64.'],
    [{ content: 'abcde' }, 'Invalid `attachments[0].content` field. The content is not valid base64.'],
    [{ content: 'data:text/plain;base64,aGk=' }, 'Invalid `attachments[0].content` field. The content is not valid base64.'],
    [{ content: [1, 256] }, 'Invalid `attachments[0].content` field. Bytes must be integers from 0 to 255; item 1 is not.'],
    [{ content: [-1] }, 'Invalid `attachments[0].content` field. Bytes must be integers from 0 to 255; item 0 is not.'],
    [{ content: { type: 'Buffer', data: [1.5] } }, 'Invalid `attachments[0].content` field. Bytes must be integers from 0 to 255; item 0 is not.'],
    [{ content: ['1'] }, 'Invalid `attachments[0].content` field. Bytes must be integers from 0 to 255; item 0 is not.'],
    [
      { content: { data: [1] } },
      'Invalid `attachments[0].content` field. It must be a base64 string, an array of bytes or a serialized Buffer (`{"type":"Buffer","data":[...]}`).',
    ],
    [{ path: 'ftp://x.io/a.pdf' }, 'Invalid `attachments[0].path` field. It must be an http:// or https:// URL.'],
    [{ path: '/etc/passwd' }, 'Invalid `attachments[0].path` field. It must be an http:// or https:// URL.'],
    [{ path: 42 }, 'The `attachments[0].path` field must be a `string`.'],
    [{ content: 'aGk=', filename: 7 }, 'The `attachments[0].filename` field must be a `string`.'],
    [{ content: 'aGk=', filename: 'a\r\nb.pdf' }, 'Invalid `attachments[0].filename` field. It must not contain control characters.'],
    [{ content: 'aGk=', content_type: 'pdf' }, 'Invalid `attachments[0].content_type` field. It must be a MIME type such as `application/pdf`.'],
    [
      { content: 'aGk=', content_type: 'text/plain\r\nX-Evil: 1' },
      'Invalid `attachments[0].content_type` field. It must be a MIME type such as `application/pdf`.',
    ],
    [{ content: 'aGk=', content_id: 'x'.repeat(128) }, 'Invalid `attachments[0].content_id` field. It must be less than 128 characters.'],
    [
      { content: 'aGk=', content_id: '<logo>' },
      'Invalid `attachments[0].content_id` field. It must not contain spaces, angle brackets, control or non-ASCII characters.',
    ],
    ['a.pdf', 'The `attachments[0]` field must be an object with a `content` or `path`.'],
  ])('rejects %j', (fields, message) => {
    expect(failure(fields)).toEqual({ code: 'invalid_attachment', message });
  });

  it('accepts a content_id of 127 characters', () => {
    expect(attachment({ content: 'aGk=', content_id: 'x'.repeat(127) }).contentId).toHaveLength(127);
  });

  it('rejects an `attachments` field that is not an array as a validation_error', () => {
    expect(errorOf(withAttachments({ content: 'aGk=' }))).toEqual({
      code: 'validation_error',
      message: 'The `attachments` field must be an array of attachment objects.',
    });
  });
});
