import { Injectable, Logger } from '@nestjs/common';
import { z } from 'zod';

/** A readiness probe: it is down when it throws, rejects, returns false or outlives its timeout. */
export type HealthCheck = () => Promise<boolean | void>;

export interface HealthCheckOptions {
  /** A dependency that answers slower than this is as good as down for a caller; default 2 s. */
  timeoutMs?: number;
  /**
   * False for a dependency the role works without, less well (Redis: see README "When Redis is
   * unreachable"). Failing, it is reported `degraded` and the role stays ready: taking every
   * replica out of the load balancer because a shared dependency blinked would turn a degraded
   * service into no service. Default true.
   */
  critical?: boolean;
}

const CHECK_STATES = ['up', 'down', 'degraded'] as const;
export type CheckState = (typeof CHECK_STATES)[number];

/** The body of /health/ready (and the ops server's), as /openapi.json describes it. */
export const readinessBodySchema = z.object({
  status: z.enum(['ok', 'degraded', 'unavailable']),
  checks: z.record(z.string(), z.enum(CHECK_STATES)).meta({ example: { postgres: 'up', redis: 'up', nats: 'up' } }),
});

export interface ReadinessReport {
  ready: boolean;
  body: z.infer<typeof readinessBodySchema>;
}

export const livenessBodySchema = z.object({ status: z.literal('ok') });
export const LIVENESS_BODY = { status: 'ok' } as const satisfies z.infer<typeof livenessBodySchema>;

const DEFAULT_TIMEOUT_MS = 2000;

interface RegisteredCheck {
  check: HealthCheck;
  timeoutMs: number;
  critical: boolean;
  lastState?: CheckState;
}

/**
 * The role's named readiness checks. Modules that own a connection (Postgres, Redis, NATS)
 * register a check here, and both the HTTP controllers and the ops server read the same list.
 */
@Injectable()
export class HealthRegistry {
  private readonly logger = new Logger(HealthRegistry.name);
  private readonly checks = new Map<string, RegisteredCheck>();

  register(name: string, check: HealthCheck, options: HealthCheckOptions = {}): void {
    // Two modules claiming one name would hide one of them from the report.
    if (this.checks.has(name)) throw new Error(`health check "${name}" is already registered`);
    this.checks.set(name, { check, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, critical: options.critical ?? true });
  }

  /** Runs every check at once, so one slow dependency costs its own timeout and no more. */
  async readiness(): Promise<ReadinessReport> {
    const entries = [...this.checks.entries()];
    const states = await Promise.all(entries.map(([name, entry]) => this.run(name, entry)));
    const checks = Object.fromEntries(entries.map(([name], i) => [name, states[i]])) as Record<string, CheckState>;
    const ready = states.every((s) => s !== 'down');
    const status = !ready ? 'unavailable' : states.includes('degraded') ? 'degraded' : 'ok';
    return { ready, body: { status, checks } };
  }

  private async run(name: string, entry: RegisteredCheck): Promise<CheckState> {
    let reason: string | undefined;
    try {
      const result = await withTimeout(entry.check(), entry.timeoutMs);
      if (result === false) reason = 'returned false';
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
    }
    const state: CheckState = reason === undefined ? 'up' : entry.critical ? 'down' : 'degraded';
    // Probes poll every few seconds; logging only the changes keeps an outage to two lines.
    if (state !== (entry.lastState ?? 'up')) {
      if (state !== 'up') this.logger.warn(`readiness check "${name}" is ${state}: ${reason}`);
      else this.logger.log(`readiness check "${name}" is up again`);
    }
    entry.lastState = state;
    return state;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
