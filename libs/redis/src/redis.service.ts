import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { createClient, RedisClientType } from 'redis';
import { REDIS_CONFIG, RedisConfig } from './redis.config';
import { isUnreachable, RedisUnavailableError } from './redis-unavailable.error';

/** How often an unavailable Redis is probed (one PING at a time) to notice it is back. */
const PROBE_INTERVAL_MS = 200;
/** node-redis PINGs an idle connection this often, so a healthy one never looks idle... */
const PING_INTERVAL_MS = 1000;
/** ...and one that stays silent this long (frozen server, lost network) is dropped and redialled. */
const SOCKET_IDLE_MS = 3000;

/**
 * The role's Redis connection (node-redis) and its health. Every key Herald writes goes through
 * `key()`, so a deployment or a test run can keep its keys under a prefix of its own.
 *
 * Requests must not hang on Redis: commands go through `command()`, which fails fast with
 * RedisUnavailableError, never after a hang. A disconnected client refuses commands at once (no
 * offline queue); a command unanswered within REDIS_COMMAND_TIMEOUT_MS marks Redis unavailable,
 * and while it is, commands are refused without being sent, until a probe PING answers again.
 * A silent socket is dropped and redialled, so recovery needs no restart. What each caller does
 * instead is in README "When Redis is unreachable".
 */
@Injectable()
export class RedisService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RedisService.name);
  readonly client: RedisClientType;
  private readonly timeoutMs: number;
  private available = false;
  private started = false;
  private closing = false;
  private probeTimer: NodeJS.Timeout | undefined;
  /** The probe PING still on the wire: no second one is written behind it (see SOCKET_IDLE_MS). */
  private probePing: Promise<unknown> | null = null;

  constructor(@Inject(REDIS_CONFIG.token) private readonly config: RedisConfig) {
    this.timeoutMs = config.REDIS_COMMAND_TIMEOUT_MS;
    this.client = createClient({
      url: config.REDIS_URL,
      disableOfflineQueue: true,
      pingInterval: PING_INTERVAL_MS,
      socket: {
        reconnectStrategy: (retries) => Math.min(retries * 100, 1000),
        connectTimeout: 5000,
        socketTimeout: SOCKET_IDLE_MS,
      },
    });
    this.client.on('error', (err: Error) => {
      // Before the first connection nothing else would say why boot is waiting.
      if (!this.started) this.logger.warn(`redis: ${err.message}`);
      this.lose(err.message);
    });
    this.client.on('ready', () => void this.probe());
  }

  key(...parts: string[]): string {
    return this.config.REDIS_PREFIX + parts.join(':');
  }

  /** False from the first sign of trouble until a probe PING is answered again. */
  get isAvailable(): boolean {
    return this.available;
  }

  /**
   * Runs one operation on the client within the command timeout. Throws RedisUnavailableError
   * at once while Redis is unavailable, and when the operation times out or fails for want of
   * Redis; an error reply that is the command's own fault is rethrown as is.
   */
  async command<T>(operation: (client: RedisClientType) => Promise<T>): Promise<T> {
    if (!this.available) throw new RedisUnavailableError('redis is unavailable');
    try {
      return await withDeadline(operation(this.client), this.timeoutMs);
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      this.lose((error as Error).message);
      throw new RedisUnavailableError((error as Error).message, undefined, true);
    }
  }

  async onModuleInit(): Promise<void> {
    await this.client.connect();
    this.started = true;
    this.available = true;
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearTimeout(this.probeTimer);
    if (!this.client.isOpen) return;
    // A graceful close waits for replies a frozen Redis never sends.
    if (this.available) await withDeadline(this.client.close(), this.timeoutMs).catch(() => this.client.destroy());
    else this.client.destroy();
  }

  async ping(): Promise<boolean> {
    return (await this.command((client) => client.ping())) === 'PONG';
  }

  private lose(reason: string): void {
    if (this.closing || !this.started) return;
    if (this.available) this.logger.warn(`Redis unavailable (${reason}); requests use their fallbacks until it answers again`);
    this.available = false;
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.closing) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  /**
   * One PING at a time: writing more behind an unanswered one would keep a dead socket looking
   * busy, and node-redis only drops it (and redials) after SOCKET_IDLE_MS of silence.
   */
  private async probe(): Promise<void> {
    if (this.available || this.closing || !this.started) return;
    if (!this.client.isReady || this.probePing) return this.scheduleProbe();
    const ping = this.client.ping();
    this.probePing = ping;
    void ping.catch(() => undefined).finally(() => (this.probePing = null));
    try {
      await withDeadline(ping, this.timeoutMs);
    } catch {
      return this.scheduleProbe();
    }
    if (this.available || this.closing) return;
    this.available = true;
    this.logger.log('Redis answers again');
  }
}

class DeadlineExceeded extends Error {}

/**
 * Settles with `promise`, or rejects after `ms`. At the deadline the decision waits one turn of
 * the event loop (setImmediate), so a reply that arrived while the loop was busy (a GC pause, a
 * loaded machine) is read first instead of being mistaken for a silent Redis.
 */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new DeadlineExceeded(`no reply from Redis within ${ms} ms`));
        }),
      ms,
    );
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
