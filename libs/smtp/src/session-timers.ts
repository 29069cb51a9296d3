import type { SMTPServer } from 'smtp-server';
import { RELAY_REPLIES } from './smtp-replies';

/** The total-session timer of each open connection of one listener. */
export class SessionTimers {
  server: SMTPServer | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Sessions whose DATA is being handled, and the ones that ran out meanwhile. */
  private readonly busy = new Set<string>();
  private readonly expired = new Set<string>();

  constructor(private readonly timeoutMs: number) {}

  open(id: string): void {
    const timer = setTimeout(() => this.expire(id), this.timeoutMs);
    timer.unref();
    this.timers.set(id, timer);
  }

  closed(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.busy.delete(id);
    this.expired.delete(id);
  }

  /** Runs a DATA handler; a session that ran out meanwhile is closed right after its reply. */
  async handling<T>(id: string, work: () => Promise<T>): Promise<T> {
    this.busy.add(id);
    try {
      return await work();
    } finally {
      this.busy.delete(id);
      // after the reply: smtp-server writes it when the callback of onData runs
      if (this.expired.delete(id)) setImmediate(() => this.kick(id));
    }
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private expire(id: string): void {
    this.timers.delete(id);
    if (this.busy.has(id)) this.expired.add(id);
    else this.kick(id);
  }

  private kick(id: string): void {
    for (const connection of this.server?.connections ?? []) {
      if (connection.id === id) connection.send(RELAY_REPLIES.sessionTooLong.code, RELAY_REPLIES.sessionTooLong.text); // 421 closes it
    }
  }
}
