import { createHash } from 'node:crypto';
import { requestHash } from './request-hash';

describe('requestHash', () => {
  it('ignores key order and whitespace, at every depth', () => {
    const a = JSON.parse('{"to":["a@x.com"],"from":"b@y.com","headers":{"X-A":"1","X-B":"2"}}') as unknown;
    const b = JSON.parse('{ "headers": { "X-B": "2", "X-A": "1" }, "from": "b@y.com", "to": [ "a@x.com" ] }') as unknown;
    expect(requestHash(a)).toBe(requestHash(b));
  });

  it('keeps array order and value types significant', () => {
    expect(requestHash({ to: ['a', 'b'] })).not.toBe(requestHash({ to: ['b', 'a'] }));
    expect(requestHash({ n: 1 })).not.toBe(requestHash({ n: '1' }));
    expect(requestHash([{ a: 1 }, { a: 2 }])).not.toBe(requestHash([{ a: 2 }, { a: 1 }]));
  });

  it('drops undefined members as JSON does', () => {
    expect(requestHash({ a: 1, b: undefined })).toBe(requestHash({ a: 1 }));
  });

  it('is the sha256 hex of the canonical JSON', () => {
    const expected = createHash('sha256').update('{"a":1,"b":[true,null]}').digest('hex');
    expect(requestHash({ b: [true, null], a: 1 })).toBe(expected);
    expect(requestHash({})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('writes what JSON.stringify writes with sorted keys, for random bodies', () => {
    const sorted = (_key: string, value: unknown) =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : value;
    let seed = 7;
    const random = (n: number) => (seed = (seed * 16807) % 2147483647) % n;
    const value = (depth: number): unknown => {
      const kind = depth > 4 ? random(4) : random(7);
      if (kind === 0) return random(1000) - 500;
      if (kind === 1) return `s${random(50)}"\\\u00e9`;
      if (kind === 2) return [true, false, null][random(3)];
      if (kind === 3) return random(2) ? undefined : new Date(Date.UTC(2026, 0, 1 + random(28)));
      if (kind === 4) return Array.from({ length: random(4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: random(4) }, () => [`k${random(9)}`, value(depth + 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const body = value(0);
      const expected = createHash('sha256')
        .update(JSON.stringify(body, sorted) ?? 'null')
        .digest('hex');
      expect(requestHash(body)).toBe(expected);
    }
  });

  it('sorts member names as strings, integer-like ones too', () => {
    const expected = createHash('sha256').update('{"10":1,"9":2,"a":3}').digest('hex');
    expect(requestHash({ a: 3, 9: 2, 10: 1 })).toBe(expected);
  });

  it('hashes a body nested 100,000 deep without recursion', () => {
    const depth = 100_000;
    const arrays = JSON.parse(`${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`) as unknown;
    const expectedArrays = createHash('sha256')
      .update(`${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`)
      .digest('hex');
    expect(requestHash(arrays)).toBe(expectedArrays);
    const objects = JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as unknown;
    expect(requestHash(objects)).toMatch(/^[0-9a-f]{64}$/);
  });
});
