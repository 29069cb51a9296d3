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

/**
 * Sign-in attempts within a minute, shared by every api process through Redis: wrong passwords
 * per account (SIGN_IN_FAILURES_PER_MINUTE; the next attempt for that account is refused until
 * the minute is over) and attempts per client address (SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE).
 * Accounts are keyed by a hash of the lowercased email, so Redis holds no addresses. Without
 * Redis, sign-in is not limited here (better-auth's password hash is slow enough to bound a
 * guesser) rather than refused for everyone.
 */
@Injectable()
export class SignInLimiter {
  constructor(
    private readonly redis: RedisService,
    @Inject(PEOPLE_CONFIG.token) private readonly config: PeopleConfig,
  ) {}

  /** Before a password is checked: counts the attempt from `ip`; refuses when either limit is reached. */
  async check(email: string, ip: string): Promise<SignInVerdict> {
    const address = await this.count('address', ip, true);
    if (address && address.n > this.config.SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE) return { allowed: false, retryAfterSeconds: address.ttl };
    const account = await this.count('account', accountKey(email), false);
    if (account && account.n >= this.config.SIGN_IN_FAILURES_PER_MINUTE) return { allowed: false, retryAfterSeconds: account.ttl };
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** After a wrong password. */
  async failed(email: string): Promise<void> {
    await this.count('account', accountKey(email), true);
  }

  private async count(kind: string, id: string, increment: boolean): Promise<{ n: number; ttl: number } | null> {
    try {
      const reply = await COUNT.run(this.redis, [this.redis.key('signin', kind, id)], [WINDOW_SECONDS, increment ? 1 : 0]);
      const [n, ttl] = integerReply(reply, 2);
      return { n: n!, ttl: Math.max(1, ttl!) };
    } catch (error) {
      if (isRedisUnavailable(error)) return null;
      throw error;
    }
  }
}

const accountKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
