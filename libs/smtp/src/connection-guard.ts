import { clientKey } from './auth-guard';

/**
 * How many connections the relay holds at once, in the manner of Postfix's
 * smtpd_client_connection_count_limit (per client) and its process limit (in all). An idle
 * connection costs a socket and a session until SMTP_IDLE_TIMEOUT_MS: without a bound, one client
 * opening thousands of them holds the process's memory and file descriptors.
 */
export interface ConnectionLimits {
  /** Connections at once from one client address (an IPv6 client: its /64). */
  perClient: number;
  /** Connections at once to this process, every listener together. */
  total: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { perClient: 100, total: 1000 };

export type Admission = 'admitted' | 'client-full' | 'full';

/**
 * Counts the open sessions of one relay process by client address. `admit` is asked at connect
 * (before the greeting): a refused connection gets 421 and the close, and is not counted. Behind a
 * load balancer that does not keep client addresses (Kubernetes' default externalTrafficPolicy
 * Cluster), every client is the node's address: raise `perClient` to `total` there.
 */
export class ConnectionGuard {
  private readonly byClient = new Map<string, number>();
  private readonly sessions = new Map<string, string>();

  constructor(private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS) {}

  admit(sessionId: string, remoteAddress: string): Admission {
    if (this.sessions.size >= this.limits.total) return 'full';
    const key = clientKey(remoteAddress);
    const open = this.byClient.get(key) ?? 0;
    if (open >= this.limits.perClient) return 'client-full';
    this.byClient.set(key, open + 1);
    this.sessions.set(sessionId, key);
    return 'admitted';
  }

  /** A session ended (admitted or not: only admitted ones are counted down). */
  closed(sessionId: string): void {
    const key = this.sessions.get(sessionId);
    if (key === undefined) return;
    this.sessions.delete(sessionId);
    const open = (this.byClient.get(key) ?? 1) - 1;
    if (open > 0) this.byClient.set(key, open);
    else this.byClient.delete(key);
  }

  get open(): number {
    return this.sessions.size;
  }
}
