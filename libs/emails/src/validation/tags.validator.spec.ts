import { validateSendRequest } from './send-request.validator';
import { errorOf, LIMITS, NOW, validEmail, valueOf } from './validation.fixture';

const withTags = (tags: unknown) => validateSendRequest(validEmail({ tags }), LIMITS, NOW);
const CHARSET = 'Tags should only contain ASCII letters, numbers, underscores, or dashes.';

describe('tags', () => {
  it('accepts name/value pairs and drops extra keys', () => {
    const tags = [
      { name: 'category', value: 'confirm_email' },
      { name: 'user-id', value: 'A-1_b', extra: true },
    ];
    expect(valueOf(withTags(tags)).tags).toEqual([
      { name: 'category', value: 'confirm_email' },
      { name: 'user-id', value: 'A-1_b' },
    ]);
    expect(valueOf(withTags([])).tags).toEqual([]);
  });

  it('accepts 75 tags and 256-character parts, and rejects more', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `t${i}`, value: 'v' }));
    expect(valueOf(withTags(many(75))).tags).toHaveLength(75);
    expect(errorOf(withTags(many(76)))).toEqual({ code: 'validation_error', message: 'The `tags` field must not contain more than 75 tags.' });
    expect(valueOf(withTags([{ name: 'n'.repeat(256), value: 'v'.repeat(256) }])).tags).toHaveLength(1);
    expect(errorOf(withTags([{ name: 'n', value: 'v'.repeat(257) }]))).toEqual({
      code: 'validation_error',
      message: 'Invalid `tags[0].value` field. Tags must be at most 256 characters long.',
    });
  });

  it.each([
    [[{ name: 'bad tag!', value: 'v' }], `Invalid \`tags[0].name\` field. ${CHARSET}`],
    [
      [
        { name: 'ok', value: 'v' },
        { name: 'ok', value: 'ümlaut' },
      ],
      `Invalid \`tags[1].value\` field. ${CHARSET}`,
    ],
    [[{ name: 'a.b', value: 'v' }], `Invalid \`tags[0].name\` field. ${CHARSET}`],
    [[{ name: '', value: 'v' }], 'Invalid `tags[0].name` field. It must not be empty.'],
    [[{ name: 'n' }], 'The `tags[0].value` field is required.'],
    [[{ value: 'v' }], 'The `tags[0].name` field is required.'],
    [[{ name: 'n', value: 3 }], 'The `tags[0].value` field must be a `string`.'],
    [['category'], 'The `tags[0]` field must be an object with a `name` and a `value`.'],
    [{ name: 'n', value: 'v' }, 'The `tags` field must be an array of `{ name, value }` objects.'],
  ])('rejects %j, naming the tag', (tags, message) => {
    expect(errorOf(withTags(tags))).toEqual({ code: 'validation_error', message });
  });
});
