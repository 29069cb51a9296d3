import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { integerReply, isRedisUnavailable, RedisScript, RedisService } from '@herald/redis';
import { PEOPLE_CONFIG, type PeopleConfig } from './people.config';

const WINDOW_SECONDS = 60;

/** KEYS[1] counter; ARGV[1] window seconds; ARGV[2] 1 to count, 0 to read. Returns { count, ttl }. */
const COUNT = new RedisScript(`
local n
if ARGV[2] == '1' then
  n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1])) end
else
  n = tonumber(redis.call('GET', KEYS[1]) or '0')
end
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then ttl = tonumber(ARGV[1]) end
return { n, ttl }
`);

export interface SignInVerdict {
  allowed: boolean;
  retryAfterSeconds: number;
}

/** The in-process fallback never holds more than this many counters (the oldest go first), whatever a flood of addresses does: a few MB. */
const MAX_WINDOWS = 100_000;

/**
 * The COUNT script's fixed one-minute windows in this process alone, for while Redis is
 * unreachable: a window starts at its first count and ends WINDOW_SECONDS later. Windows are kept
 * in the order they end (a new one goes last), so those that are over are always the first ones
 * and dropping them costs nothing per attempt.
 */
export class LocalSignInCounter {
  private readonly windows = new Map<string, { n: number; endsAt: number }>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  count(key: string, increment: boolean): { n: number; ttl: number } {
    const now = this.clock();
    for (const [k, w] of this.windows) {
      if (w.endsAt > now && this.windows.size < MAX_WINDOWS) break;
      this.windows.delete(k);
    }
    let window = this.windows.get(key);
    if (!window) {
      if (!increment) return { n: 0, ttl: WINDOW_SECONDS };
      window = { n: 0, endsAt: now + WINDOW_SECONDS * 1000 };
      this.windows.set(key, window);
    }
    if (increment) window.n++;
    return { n: window.n, ttl: Math.max(1, Math.ceil((window.endsAt - now) / 1000)) };
  }
}

/**
 * Sign-in attempts within a minute, shared by every api process through Redis: wrong passwords
 * per account (SIGN_IN_FAILURES_PER_MINUTE; the next attempt for that account is refused until
 * the minute is over) and attempts per client address (SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE).
 * Accounts are keyed by a hash of the lowercased email, so Redis holds no addresses. While Redis
 * is unreachable each process counts alone (LocalSignInCounter) with the same limits, so an
 * outage does not open the door to guessing: a guesser spread over N api processes gets at
 * most N times the limit. The local counts are not carried over when Redis is back.
 */
@Injectable()
export class SignInLimiter {
  private readonly local = new LocalSignInCounter();

  constructor(
    private readonly redis: RedisService,
    @Inject(PEOPLE_CONFIG.token) private readonly config: PeopleConfig,
  ) {}

  /** Before a password is checked: counts the attempt from `ip`; refuses when either limit is reached. */
  async check(email: string, ip: string): Promise<SignInVerdict> {
    const address = await this.count('address', ip, true);
    if (address.n > this.config.SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE) return { allowed: false, retryAfterSeconds: address.ttl };
    const account = await this.count('account', accountKey(email), false);
    if (account.n >= this.config.SIGN_IN_FAILURES_PER_MINUTE) return { allowed: false, retryAfterSeconds: account.ttl };
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** After a wrong password. */
  async failed(email: string): Promise<void> {
    await this.count('account', accountKey(email), true);
  }

  private async count(kind: string, id: string, increment: boolean): Promise<{ n: number; ttl: number }> {
    try {
      const reply = await COUNT.run(this.redis, [this.redis.key('signin', kind, id)], [WINDOW_SECONDS, increment ? 1 : 0]);
      const [n, ttl] = integerReply(reply, 2);
      return { n: n!, ttl: Math.max(1, ttl!) };
    } catch (error) {
      if (isRedisUnavailable(error)) return this.local.count(`${kind}:${id}`, increment);
      throw error;
    }
  }
}

const accountKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
