import { isIPv6 } from 'node:net';

/**
 * How many failed AUTHs the relay puts up with, in the manner of Postfix (smtpd_hard_error_limit
 * for one connection, anvil's smtpd_client_auth_rate_limit for one client address).
 */
export interface AuthLimits {
  /** Failed AUTHs on one connection; the one that reaches it is followed by 421 and a close. */
  perConnection: number;
  /** Failed AUTHs from one client address (an IPv6 client: its /64) within `windowMs`... */
  perAddress: number;
  /** ...after which every AUTH from it gets 421 without its key being looked at, until the window ends. */
  windowMs: number;
}

export const DEFAULT_AUTH_LIMITS: AuthLimits = { perConnection: 3, perAddress: 10, windowMs: 5 * 60_000 };

/** Addresses remembered at most; past it the oldest window goes first (a bound on memory, not a policy). */
const MAX_ADDRESSES = 100_000;

/**
 * Counts failed AUTHs per connection and per client address, in this process. The address count
 * is not shared between smtp processes: with P of them a client gets at most P × perAddress
 * guesses per window, against API keys with 190 random bits; what it buys is that a guessing
 * client is cut off cheaply, and that it needs no Redis (so it still holds when Redis is down).
 * A failure is a permanent refusal (a wrong key or username): a temporary one (454, the database
 * unreachable) is Herald's fault and not counted.
 */
export class AuthGuard {
  private readonly perSession = new Map<string, number>();
  private readonly perAddress = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limits: AuthLimits = DEFAULT_AUTH_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** False while the client's address is over its limit: answer 421 and do not check the key. */
  admits(remoteAddress: string): boolean {
    const key = clientKey(remoteAddress);
    const entry = this.perAddress.get(key);
    if (!entry) return true;
    if (entry.resetAt <= this.now()) {
      this.perAddress.delete(key);
      return true;
    }
    return entry.count < this.limits.perAddress;
  }

  /** Records a failed AUTH; true when the connection has reached its limit and must be closed. */
  failed(sessionId: string, remoteAddress: string): boolean {
    const key = clientKey(remoteAddress);
    const now = this.now();
    const entry = this.perAddress.get(key);
    if (entry && entry.resetAt > now) {
      entry.count++;
    } else {
      this.perAddress.delete(key);
      if (this.perAddress.size >= MAX_ADDRESSES) this.perAddress.delete(this.perAddress.keys().next().value!);
      this.perAddress.set(key, { count: 1, resetAt: now + this.limits.windowMs });
    }
    const count = (this.perSession.get(sessionId) ?? 0) + 1;
    this.perSession.set(sessionId, count);
    return count >= this.limits.perConnection;
  }

  closed(sessionId: string): void {
    this.perSession.delete(sessionId);
  }
}

/**
 * What a client address is counted under: an IPv4 address (IPv4-mapped IPv6 included) as it is,
 * an IPv6 address by its /64, since one host usually holds a whole /64 and could walk through it.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail] = address.split('%')[0].split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  // an embedded IPv4 tail (`64:ff9b::192.0.2.1`) is two groups; only the first four matter here
  const right = groups(tail).flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
