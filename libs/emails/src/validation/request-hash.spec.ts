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
});
