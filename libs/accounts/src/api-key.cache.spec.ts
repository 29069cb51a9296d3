import { ApiKeyCache } from './api-key.cache';

describe('ApiKeyCache', () => {
  let now = 0;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000;
  });

  it('forgets an entry once its time to live has passed', () => {
    const cache = new ApiKeyCache<string>(30_000, 10, clock);
    cache.set('a', 'A');
    now += 29_999;
    expect(cache.get('a')).toBe('A');
    now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('says when an entry is due for renewal: in the last quarter of its time to live', () => {
    const cache = new ApiKeyCache<string>(30_000, 10, clock);
    expect(cache.renewDue('a')).toBe(false);
    cache.set('a', 'A');
    now += 22_500;
    expect(cache.renewDue('a')).toBe(false);
    now += 1;
    expect(cache.renewDue('a')).toBe(true);
    cache.set('a', 'A again');
    expect(cache.renewDue('a')).toBe(false);
  });

  it('caches nothing when the time to live is zero', () => {
    const cache = new ApiKeyCache<string>(0, 10, clock);
    cache.set('a', 'A');
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the oldest insertion past its size cap', () => {
    const cache = new ApiKeyCache<string>(30_000, 2, clock);
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('a', 'A2'); // re-inserting makes 'a' the newest
    cache.set('c', 'C');
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['A2', undefined, 'C']);
  });

  it('deletes on request', () => {
    const cache = new ApiKeyCache<string>(30_000, 10, clock);
    cache.set('a', 'A');
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });
});
