import type { DeliveryJob, RecipientOutcome, RecipientResult } from '../delivery.types';
import { AddressPool, type AddressPoolOptions, type Lease } from './address-pool';
import { DestinationHealth, type DestinationHealthOptions, type Suspension } from './destination-health';
import type { MxHost } from './mx-resolver';
import { heraldClock } from '@herald/core';

export interface DestinationOptions extends AddressPoolOptions, DestinationHealthOptions {
  /** SMTP transactions at once (and connections per MX address). */
  connections: number;
  /** Jobs waiting (and places reserved for jobs on their way); beyond this a job is handed back unattempted, to come back once the queue has drained. */
  queueLimit: number;
}

/**
 * Jobs waiting in the queues of all of a transmitter's destinations. Up to `limit` of them, and
 * `byteLimit` bytes of their built messages, wait without holding their caller's slot; past
 * either, a waiting job keeps it (back-pressure on the send stream instead of an unbounded pile
 * in memory: thousands of large messages for a tarpit would otherwise end the process).
 */
export class WaitingRoom {
  size = 0;
  bytes = 0;

  constructor(
    readonly limit: number,
    readonly byteLimit = Infinity,
  ) {}

  enter(job: DeliveryJob): void {
    this.size++;
    this.bytes += job.message.length;
  }

  leave(job: DeliveryJob): void {
    this.size--;
    this.bytes -= job.message.length;
  }

  get hasRoom(): boolean {
    return this.size <= this.limit && this.bytes <= this.byteLimit;
  }
}

const SHUTDOWN_REPLY = '451 4.3.2 Herald: transmitter shutting down, job not attempted';
const QUEUE_FULL_REPLY = '451 4.4.5 Herald: destination queue full, job not attempted';
/** A job handed back from a full queue comes back no sooner than this. */
const MIN_REQUEUE_MS = 1_000;
/**
 * A called-back email that has not come within this long no longer holds a place: it was
 * canceled or sent meanwhile, or another worker of the region took it (and one of its places).
 * Calls come back within a second or so (the caller runs the dispatch relay at once).
 */
const CALL_TIMEOUT_MS = 3_000;
/** Most emails on a destination's waitlist; past it, an email turned away comes back when its postponement ends. */
const MAX_WAITLIST = 100_000;

type Waiting = { job: DeliveryJob; hosts: MxHost[]; resolve: (results: RecipientResult[]) => void; started?: true };

/** A job whose email's claim ran out before its transaction (it is another attempt's now, or will be). */
const CLAIM_LOST_REPLY = '451 4.3.0 Herald: the claim on this email ran out before it was sent; it was not sent';

/** A job given back unstarted at shutdown. */
export const handBack = (job: DeliveryJob): RecipientResult[] => deferAll(job, SHUTDOWN_REPLY, null, { notAttempted: true });

/** Every recipient of a job gets the same `deferred` outcome. */
export function deferAll(
  job: DeliveryJob,
  response: string,
  mx: string | null,
  extra: { notAttempted?: true; queueFull?: true; notBefore?: Date } = {},
): RecipientResult[] {
  const outcome: RecipientOutcome = { kind: 'deferred', response, mx, ...extra };
  return job.recipients.map((recipient) => ({ recipient, outcome }));
}

/**
 * The sender actor for one destination (a set of MX hosts shared by any number of domains). It
 * owns the FIFO queue, the cap on simultaneous SMTP transactions, the connections and the
 * back-off state (DestinationHealth), so a slow or dead destination only ever holds up its own
 * jobs: a job that has to wait for a connection (or for the probe of a destination coming out of
 * its back-off) tells its caller, who stops counting it against the worker's concurrency. Its
 * queue is also bounded before the work: emails are admitted against it before their claim and
 * build (`reserve`), and those it has no room for wait on its waitlist until called back.
 */
export class Destination {
  private readonly queue: Waiting[] = [];
  private readonly pools = new Map<string, AddressPool>();
  private readonly drained: (() => void)[] = [];
  private readonly health: DestinationHealth;
  private active = 0;
  private closing = false;
  /** A moving average of transaction times, to tell a job handed back from a full queue when to return. */
  private transactionMs = 1_000;
  /** Places held for emails admitted before their claim (see `reserve`), whose jobs have not arrived yet. */
  private reserved = 0;
  /** Emails turned away by `reserve`, by id, in order: called back as the queue makes room. */
  private readonly waitlist = new Set<string>();
  /** Emails called back and not come yet, with when they were called: each has a place kept for it. */
  private readonly called = new Map<string, number>();
  /** Calls again once the oldest call times out, should nothing else (a job done, an email turned away) do it first. */
  private recall: NodeJS.Timeout | null = null;

  /** `onRoom` is told which waitlisted emails to bring back (see `reserve`). */
  constructor(
    readonly key: string,
    private readonly options: DestinationOptions,
    private readonly room: WaitingRoom = new WaitingRoom(Infinity),
    private readonly onRoom: (emailIds: string[]) => void = () => undefined,
  ) {
    this.health = new DestinationHealth(key, options);
  }

  stats(): { queued: number; active: number; reserved: number } {
    return { queued: this.queue.length, active: this.active, reserved: this.reserved };
  }

  /**
   * Admission before any work is done on an email (claim, build, signature). 0: a place in the
   * queue is held for its job (an email called back has one kept for it). Otherwise the queue
   * is full, or others wait before it: the email joins the waitlist (or keeps its place there)
   * and is named to `onRoom` once there is room for it, first come, first called; the number
   * is about how long that should take (ms). An email `called` back by another worker takes
   * one of the places kept here (calls land on any worker of the region; each keeps as many
   * places as it calls). A closing or suspended destination admits: its jobs get the answer they
   * get today (handed back, or deferred to the end of the back-off).
   */
  reserve(emailId: string, called = false): number {
    // One on the waitlist that came back by itself (its postponement ended) is as good as called, if there is room.
    const admitted =
      this.called.delete(emailId) ||
      (called && this.takeAnyCall()) ||
      this.closing ||
      !!this.health.suspension() ||
      (this.load() < this.options.queueLimit && (!this.waitlist.size || this.waitlist.has(emailId)));
    if (admitted) {
      this.waitlist.delete(emailId);
      this.reserved++;
      return 0;
    }
    if (this.waitlist.size < MAX_WAITLIST) this.waitlist.add(emailId);
    this.callWaiting();
    return Math.max(1, Math.round(((this.load() + this.waitlist.size) * this.transactionMs) / this.concurrency()));
  }

  /** A place held by `reserve` is given up: its job arrived (`deliver` with `reserved`) or never will. */
  unreserve(): void {
    this.reserved = Math.max(0, this.reserved - 1);
  }

  /** Nothing queued, reserved, waiting or being sent, and no recent failure to remember: it can be forgotten. */
  isIdle(): boolean {
    this.forgetLateCalls();
    return !this.queue.length && !this.active && !this.reserved && !this.waitlist.size && !this.called.size && this.health.isForgettable();
  }

  /** A called-back email of another worker's takes the place kept longest (or none is left: it comes in over the bound). */
  private takeAnyCall(): true {
    const oldest = this.called.keys().next();
    if (!oldest.done) this.called.delete(oldest.value);
    return true;
  }

  /** Jobs queued, and places held for emails admitted or called back. */
  private load(): number {
    return this.queue.length + this.reserved + this.called.size;
  }

  /** Calls back as many waitlisted emails as there is room for. */
  private callWaiting(): void {
    this.forgetLateCalls();
    if (!this.waitlist.size || this.closing) return;
    let room = this.options.queueLimit - this.load();
    const now = Date.now();
    const ids: string[] = [];
    for (const id of this.waitlist) {
      if (room-- <= 0) break;
      ids.push(id);
    }
    for (const id of ids) {
      this.waitlist.delete(id);
      this.called.set(id, now);
    }
    if (ids.length) this.onRoom(ids);
    this.recallLater();
  }

  /** Calls again once the oldest call times out, if emails still wait. */
  private recallLater(): void {
    const oldest = this.called.values().next();
    if (this.recall || oldest.done || !this.waitlist.size) return;
    this.recall = setTimeout(
      () => {
        this.recall = null;
        this.callWaiting();
      },
      oldest.value + CALL_TIMEOUT_MS - Date.now(),
    ).unref();
  }

  private forgetLateCalls(): void {
    const late = Date.now() - CALL_TIMEOUT_MS;
    for (const [id, at] of this.called) {
      if (at > late) break;
      this.called.delete(id);
    }
  }

  /**
   * `waiting` is called if the job has to wait in the queue (see Transmitter.deliver). A job
   * that had its place reserved (and given up just before this call) takes it even when jobs
   * that came unannounced have filled the queue meanwhile.
   */
  deliver(job: DeliveryJob, hosts: MxHost[], waiting?: () => void, reserved = false): Promise<RecipientResult[]> {
    if (this.closing) return Promise.resolve(handBack(job));
    const suspension = this.health.suspension();
    if (suspension) return Promise.resolve(suspended(job, suspension));
    if (!reserved && this.queue.length + this.reserved >= this.options.queueLimit) {
      const drainMs = (this.queue.length / this.concurrency()) * this.transactionMs;
      const notBefore = new Date(heraldClock.nowMs() + Math.min(Math.max(drainMs, MIN_REQUEUE_MS), this.options.backoffMaxMs));
      return Promise.resolve(deferAll(job, QUEUE_FULL_REPLY, null, { notAttempted: true, queueFull: true, notBefore }));
    }
    return new Promise((resolve) => {
      const entry: Waiting = { job, hosts, resolve };
      this.queue.push(entry);
      this.room.enter(job);
      this.pump();
      if (!entry.started && this.room.hasRoom) waiting?.();
    });
  }

  /** Stops taking jobs, hands back the unstarted ones, waits for transactions in flight, closes connections. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.recall) clearTimeout(this.recall);
    for (const waiting of this.takeAll()) waiting.resolve(handBack(waiting.job));
    if (this.active) await new Promise<void>((resolve) => this.drained.push(resolve));
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
  }

  /** One connection while on probation (the probe), every connection otherwise. */
  private concurrency(): number {
    return this.health.onProbation() ? 1 : this.options.connections;
  }

  private pump(): void {
    const suspension = this.health.suspension();
    // Jobs that queued before the destination went down are not sent into the same wall.
    if (suspension) {
      for (const waiting of this.takeAll()) waiting.resolve(suspended(waiting.job, suspension));
      return;
    }
    while (this.queue.length && this.active < this.concurrency()) {
      const next = this.queue.shift()!;
      this.room.leave(next.job);
      next.started = true;
      this.start(next);
    }
    this.callWaiting();
  }

  private start({ job, hosts, resolve }: Waiting): void {
    this.active++;
    const startedAt = Date.now();
    void this.attempt(job, hosts)
      .catch((error: unknown) => deferAll(job, `451 4.3.0 Herald: ${String(error)}`, null))
      .then(resolve)
      .finally(() => {
        this.active--;
        this.transactionMs += (Date.now() - startedAt - this.transactionMs) / 8;
        if (!this.active) this.drained.splice(0).forEach((notify) => notify());
        this.pump();
      });
  }

  private takeAll(): Waiting[] {
    for (const { job } of this.queue) this.room.leave(job);
    return this.queue.splice(0);
  }

  /**
   * RFC 5321 §5.1: MX hosts in preference order, each host's addresses in order, until one
   * answers. The destination failed if none did, or if the session that did ended in a 421 or
   * without a reply; it succeeded if the session got through to any other reply.
   */
  private async attempt(job: DeliveryJob, hosts: MxHost[]): Promise<RecipientResult[]> {
    let last = 'no MX host could be reached';
    let lastMx: string | null = null;
    let unreachable = false;
    for (const host of hosts) {
      for (const address of host.addresses) {
        const pool = this.pool(host.name, address);
        let lease: Lease;
        try {
          lease = await pool.acquire(job.requireTls);
        } catch (error) {
          const failure = error as Error & { code?: string; response?: string };
          last = `451 4.4.1 ${host.name}[${address}]:${this.options.port}: ${failure.response ?? failure.message}`;
          lastMx = host.name;
          // A server refusing the TLS a job requires is reachable; it is not a reason to back off.
          if (!(job.requireTls && failure.code === 'ETLS')) unreachable = true;
          continue;
        }
        if (job.held && !(await job.held())) {
          pool.giveBack(lease);
          return deferAll(job, CLAIM_LOST_REPLY, null, { notAttempted: true });
        }
        const { results, siteFailure } = await pool.send(lease, job);
        if (siteFailure) this.health.failed(siteFailure);
        else this.health.succeeded();
        return results;
      }
    }
    if (unreachable) this.health.failed(last);
    return deferAll(job, last, lastMx);
  }

  private pool(mx: string, address: string): AddressPool {
    const key = `${mx}|${address}`;
    const pool = this.pools.get(key) ?? new AddressPool(mx, address, this.options);
    this.pools.set(key, pool);
    return pool;
  }
}

/** Mail for a suspended destination waits out its back-off in Postgres, announced as a delay. */
function suspended(job: DeliveryJob, { reply, until }: Suspension): RecipientResult[] {
  return deferAll(job, reply, null, { notBefore: until });
}
