import { createHash } from 'node:crypto';
import type { RedisService } from './redis.service';

/**
 * A Lua script run by its SHA1 (EVALSHA), falling back to EVAL when the server has not cached it
 * yet (first call, restart, failover, SCRIPT FLUSH). The shared client is created by RedisService
 * without node-redis `scripts`, so this does what `defineScript` would: one round trip in the
 * steady state, the script text sent only when needed. Either way the script runs atomically.
 */
export class RedisScript {
  private readonly sha1: string;

  constructor(private readonly source: string) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script through `RedisService.command`: fails fast with RedisUnavailableError. */
  run(redis: RedisService, keys: string[], args: Array<string | number>): Promise<unknown> {
    const options = { keys, arguments: args.map(String) };
    return redis.command(async (client) => {
      try {
        return await client.evalSha(this.sha1, options);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return await client.eval(this.source, options);
      }
    });
  }
}

/** Narrows a script's reply to the array of integers the script promises to return. */
export function integerReply(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length || !reply.every((n) => typeof n === 'number')) {
    throw new Error(`unexpected Lua reply: ${JSON.stringify(reply)}`);
  }
  return reply as number[];
}
