import { isUuid, newId, stableId } from './ids';

describe('newId', () => {
  it('is a version 7 UUID with RFC 9562 variant bits', () => {
    const id = newId();
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('starts with the time in milliseconds, so later ids sort after earlier ones', () => {
    const before = Date.now();
    const id = newId();
    const millis = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(Date.now());
    const later = new Date(before + 2);
    jest.useFakeTimers({ now: later });
    try {
      expect(newId() > id).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('differs every time', () => {
    expect(new Set(Array.from({ length: 10_000 }, newId)).size).toBe(10_000);
  });
});

describe('stableId', () => {
  it('is the same UUID (version 8) for the same parts, and another for other parts', () => {
    expect(stableId('a', 'b')).toBe(stableId('a', 'b'));
    expect(stableId('a', 'b')).not.toBe(stableId('ab'));
    expect(stableId('a')[14]).toBe('8');
  });
});
