import { HeraldError } from '@herald/core';
import { jsonShapeExceeds, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH, nulPath, parseJsonBody } from './json-body.parser';

const nestsDeeperThan = (text: string, limit: number) => jsonShapeExceeds(text, limit) === 'depth';

const arrays = (depth: number, inner = '"\\u0000"') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const objects = (depth: number, inner = '"\\u0000"') => `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;

const refusal = (text: string): HeraldError => {
  try {
    parseJsonBody(text);
  } catch (error) {
    return error as HeraldError;
  }
  throw new Error('parsed');
};

describe('parseJsonBody', () => {
  it('answers undefined for an empty or blank body, the value otherwise', () => {
    expect(parseJsonBody('')).toBeUndefined();
    expect(parseJsonBody(' \r\n\t')).toBeUndefined();
    expect(parseJsonBody(' {"to":["a@x.com"]} ')).toEqual({ to: ['a@x.com'] });
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more, naming the limit`, () => {
    expect(parseJsonBody(arrays(MAX_JSON_DEPTH, '1'))).toBeDefined();
    expect(parseJsonBody(objects(MAX_JSON_DEPTH, '1'))).toBeDefined();
    for (const text of [arrays(MAX_JSON_DEPTH + 1, '1'), objects(MAX_JSON_DEPTH + 1, '1')]) {
      expect(refusal(text)).toMatchObject({
        code: 'validation_error',
        message: `The request body must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
      });
    }
  });

  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])('refuses %s nested 100,000 deep around a NUL before the NUL check or JSON.parse runs', (_kind, nest) => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const error = refusal(nest(100_000));
      expect(error).toMatchObject({ code: 'validation_error', message: expect.stringContaining(`${MAX_JSON_DEPTH} levels`) });
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it(`accepts ${MAX_JSON_CONTAINERS} arrays and objects and refuses one more before JSON.parse runs`, () => {
    const empties = (count: number) => `[${'{},'.repeat(count - 2)}{}]`;
    expect(parseJsonBody(empties(MAX_JSON_CONTAINERS))).toHaveLength(MAX_JSON_CONTAINERS - 1);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      expect(refusal(empties(MAX_JSON_CONTAINERS + 1))).toMatchObject({
        code: 'validation_error',
        message: `The request body must not hold more than ${MAX_JSON_CONTAINERS} arrays and objects.`,
      });
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it('refuses text that is not JSON, and a NUL anywhere, naming where', () => {
    expect(refusal('{"to":')).toMatchObject({ code: 'validation_error', message: 'The request body is not valid JSON.' });
    expect(refusal('{"attachments":[{"filename":"a\\u0000.pdf"}]}').message).toBe(
      'The `attachments[0].filename` field must not contain NUL (\\u0000) characters.',
    );
    expect(refusal('{"headers":{"X-\\u0000":"1"}}').message).toContain('`headers.X-\u0000`');
    expect(refusal('"\\u0000"').message).toContain('`body`');
  });

  it('tells an escaped backslash followed by u0000 from a NUL', () => {
    expect(parseJsonBody('{"html":"C:\\\\u0000"}')).toEqual({ html: 'C:\\u0000' });
  });
});

describe('nestsDeeperThan', () => {
  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(`["${'['.repeat(100)}"]`, 1)).toBe(false);
    expect(nestsDeeperThan(`["\\"${'{'.repeat(100)}"]`, 1)).toBe(false);
    expect(nestsDeeperThan(`["\\\\", ["x"]]`, 1)).toBe(true);
    expect(nestsDeeperThan(`["\\\\\\"]", ["x"]]`, 1)).toBe(true);
  });

  it('counts depth, not the number of arrays and objects', () => {
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 10_000 }, () => [{ a: [1] }])), 4)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 10_000 }, () => [{ a: [1] }])), 3)).toBe(true);
  });

  it('skips a 40 MB attachment string at the speed of indexOf, far faster than JSON.parse reads it', () => {
    const body = JSON.stringify({ attachments: [{ content: 'QUJD'.repeat(10 * 1024 * 1024), filename: 'a.bin' }] });
    body.includes('\0'); // flattens the string, which the first reader would pay for either way
    const time = (work: () => unknown) => {
      const started = process.hrtime.bigint();
      work();
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    let deeper = true;
    const scanMs = time(() => (deeper = nestsDeeperThan(body, MAX_JSON_DEPTH)));
    const parseMs = time(() => JSON.parse(body));
    console.log(`depth scan ${scanMs.toFixed(1)} ms, JSON.parse ${parseMs.toFixed(1)} ms, for ${body.length} characters`);
    expect(deeper).toBe(false);
    expect(scanMs).toBeLessThan(parseMs);
  });
});

describe('nulPath', () => {
  it('finds the first NUL in document order, member names included', () => {
    expect(nulPath({ a: ['ok', 'x\0'], b: 'y\0' })).toBe('a[1]');
    expect(nulPath({ 'k\0': 'v', b: 'y\0' })).toBe('k\0');
    expect(nulPath({ a: { b: [{ c: 'ok' }, { d: 'z\0' }] } })).toBe('a.b[1].d');
    expect(nulPath({ a: [1, true, null, 'ok'] })).toBeNull();
  });

  it('walks a value nested 100,000 deep without recursion', () => {
    const deep = JSON.parse(arrays(100_000)) as unknown;
    expect(nulPath(deep)).toBe('[0]'.repeat(100_000));
  });
});
