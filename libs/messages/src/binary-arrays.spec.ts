import { byteaArrayParameter, jsonbArrayParameter, textArrayParameter } from './binary-arrays';

/** The elements of a one-dimensional binary array, as Postgres's array_recv reads them. */
function decode(buffer: Buffer): { hasNull: number; oid: number; elements: (Buffer | null)[] } {
  const dimensions = buffer.readInt32BE(0);
  const hasNull = buffer.readInt32BE(4);
  const oid = buffer.readInt32BE(8);
  if (dimensions === 0) return { hasNull, oid, elements: [] };
  expect(dimensions).toBe(1);
  expect(buffer.readInt32BE(16)).toBe(1);
  const elements: (Buffer | null)[] = [];
  let at = 20;
  for (let i = 0; i < buffer.readInt32BE(12); i++) {
    const length = buffer.readInt32BE(at);
    at += 4;
    elements.push(length < 0 ? null : buffer.subarray(at, (at += length)));
  }
  expect(at).toBe(buffer.length);
  return { hasNull, oid, elements };
}

describe('binary array parameters', () => {
  it('writes text elements as UTF-8, length-prefixed, with NULLs flagged', () => {
    const { hasNull, oid, elements } = decode(textArrayParameter(['<p class="a">é</p>', null, '', 'a"b\\c{,}']));
    expect(oid).toBe(25);
    expect(hasNull).toBe(1);
    expect(elements.map((e) => e?.toString('utf8') ?? null)).toEqual(['<p class="a">é</p>', null, '', 'a"b\\c{,}']);
  });

  it('writes jsonb elements after their version byte', () => {
    const { hasNull, oid, elements } = decode(jsonbArrayParameter(['{"a":"ü"}']));
    expect([oid, hasNull]).toEqual([3802, 0]);
    expect(elements[0]![0]).toBe(1);
    expect(elements[0]!.subarray(1).toString('utf8')).toBe('{"a":"ü"}');
  });

  it('writes an empty array with no dimension', () => {
    expect(decode(textArrayParameter([]))).toEqual({ hasNull: 0, oid: 25, elements: [] });
    expect(decode(byteaArrayParameter([]))).toEqual({ hasNull: 0, oid: 17, elements: [] });
  });

  it('writes bytea elements as their bytes, an element in parts as their concatenation', () => {
    const binary = Buffer.from([0, 255, 13, 10, 0x5c]);
    const { hasNull, oid, elements } = decode(byteaArrayParameter([binary, [Buffer.from('Subject: a\r\n'), Buffer.alloc(0), binary], []]));
    expect([oid, hasNull]).toEqual([17, 0]);
    expect(elements).toEqual([binary, Buffer.concat([Buffer.from('Subject: a\r\n'), binary]), Buffer.alloc(0)]);
  });
});
