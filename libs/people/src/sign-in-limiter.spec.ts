import { LocalSignInCounter } from './sign-in-limiter';

describe('LocalSignInCounter (the sign-in limit while Redis is unreachable)', () => {
  let now = 0;
  const counter = new LocalSignInCounter(() => now);

  it('counts within a minute from the first attempt, then starts again', () => {
    now = 1_000;
    expect(counter.count('account:a', false)).toEqual({ n: 0, ttl: 60 });
    expect(counter.count('account:a', true)).toEqual({ n: 1, ttl: 60 });
    now += 20_500;
    expect(counter.count('account:a', true)).toEqual({ n: 2, ttl: 40 });
    expect(counter.count('account:a', false)).toEqual({ n: 2, ttl: 40 });
    expect(counter.count('account:b', false)).toEqual({ n: 0, ttl: 60 });
    now += 39_500;
    expect(counter.count('account:a', false)).toEqual({ n: 0, ttl: 60 });
    expect(counter.count('account:a', true)).toEqual({ n: 1, ttl: 60 });
  });

  it('keeps its memory bounded: windows that are over are dropped', () => {
    const many = new LocalSignInCounter(() => now);
    for (let i = 0; i < 10_001; i++) many.count(`address:${i}`, true);
    now += 61_000;
    many.count('address:new', true);
    expect((many as unknown as { windows: Map<string, unknown> }).windows.size).toBe(1);
  });

  it('holds at most 100,000 windows, dropping the oldest, even when none is over', () => {
    const flooded = new LocalSignInCounter(() => now);
    for (let i = 0; i < 100_050; i++) flooded.count(`address:${i}`, true);
    expect((flooded as unknown as { windows: Map<string, unknown> }).windows.size).toBe(100_000);
    expect(flooded.count('address:0', false).n).toBe(0);
    expect(flooded.count('address:100049', false).n).toBe(1);
  });
});
