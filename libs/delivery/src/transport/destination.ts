import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { classifyRefusal, parseSmtpReply } from '../bounce-classification';
import type { DeliveryJob, RecipientOutcome, RecipientResult } from '../delivery.types';
import type { MxHost } from './mx-resolver';

export interface DestinationOptions {
  /** EHLO name. */
  hostname: string;
  port: number;
  connections: number;
  messagesPerConnection: number;
  queueLimit: number;
  connectTimeoutMs: number;
  greetingTimeoutMs: number;
  commandTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

/** Consecutive connection-level failures that put a destination in back-off. */
const FAILURES_BEFORE_BACKOFF = 3;
/** A pooled connection unused this long is closed, so quiet destinations hold no sockets. */
const IDLE_MS = 10_000;
const SHUTDOWN_REPLY = '451 4.3.2 Herald: transmitter shutting down, job not attempted';

/** nodemailer writes `rejectedErrors` onto the envelope it is given, even when the send fails at DATA. */
type TrackedEnvelope = SMTPConnection.Envelope & { rejectedErrors?: RecipientError[] };
type RecipientError = SMTPConnection.SMTPError & { recipient?: string };
type Waiting = { job: DeliveryJob; hosts: MxHost[]; resolve: (results: RecipientResult[]) => void };
interface Lease {
  connection: SMTPConnection;
  messages: number;
  idleTimer?: NodeJS.Timeout;
}

/** A job given back unstarted at shutdown. */
export const handBack = (job: DeliveryJob): RecipientResult[] => deferAll(job, SHUTDOWN_REPLY, null, true);

/** Every recipient of a job gets the same `deferred` outcome. */
export function deferAll(job: DeliveryJob, response: string, mx: string | null, notAttempted = false): RecipientResult[] {
  const outcome: RecipientOutcome = notAttempted ? { kind: 'deferred', response, mx, notAttempted: true } : { kind: 'deferred', response, mx };
  return job.recipients.map((recipient) => ({ recipient, outcome }));
}

/**
 * The sender actor for one destination (a set of MX hosts shared by any number of domains). It
 * owns the FIFO queue, the cap on simultaneous SMTP transactions, the connections and the
 * back-off state, so a slow or dead destination only ever holds up its own jobs.
 */
export class Destination {
  private readonly queue: Waiting[] = [];
  private readonly pools = new Map<string, AddressPool>();
  private readonly drained: (() => void)[] = [];
  private active = 0;
  private failures = 0;
  private trips = 0;
  private downUntil = 0;
  private closing = false;

  constructor(
    readonly key: string,
    private readonly options: DestinationOptions,
  ) {}

  stats(): { queued: number; active: number } {
    return { queued: this.queue.length, active: this.active };
  }

  /** Nothing queued or being sent, and no back-off to remember: it can be forgotten. */
  isIdle(now = Date.now()): boolean {
    return !this.queue.length && !this.active && this.failures === 0 && this.downUntil <= now;
  }

  deliver(job: DeliveryJob, hosts: MxHost[]): Promise<RecipientResult[]> {
    if (this.closing) return Promise.resolve(handBack(job));
    const down = this.backoffReply();
    if (down) return Promise.resolve(deferAll(job, down, null));
    if (this.active >= this.options.connections && this.queue.length >= this.options.queueLimit) {
      return Promise.resolve(deferAll(job, '451 4.4.5 Herald: destination queue full', null));
    }
    return new Promise((resolve) => {
      this.queue.push({ job, hosts, resolve });
      this.pump();
    });
  }

  /** Stops taking jobs, hands back the unstarted ones, waits for transactions in flight, closes connections. */
  async close(): Promise<void> {
    this.closing = true;
    for (const waiting of this.queue.splice(0)) waiting.resolve(handBack(waiting.job));
    if (this.active) await new Promise<void>((resolve) => this.drained.push(resolve));
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
  }

  private pump(): void {
    let next: Waiting | undefined;
    while (this.active < this.options.connections && (next = this.queue.shift())) {
      const { job, hosts, resolve } = next;
      // Jobs that queued before the destination went down are not sent into the same wall.
      const down = this.backoffReply();
      if (down) {
        resolve(deferAll(job, down, null));
        continue;
      }
      this.active++;
      void this.attempt(job, hosts)
        .catch((error: unknown) => deferAll(job, `451 4.3.0 Herald: ${String(error)}`, null))
        .then(resolve)
        .finally(() => {
          this.active--;
          if (!this.active) this.drained.splice(0).forEach((notify) => notify());
          this.pump();
        });
    }
  }

  /** RFC 5321 §5.1: MX hosts in preference order, each host's addresses in order, until one answers. */
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
          const failure = error as SMTPConnection.SMTPError;
          last = `451 4.4.1 ${host.name}[${address}]:${this.options.port}: ${failure.message}`;
          lastMx = host.name;
          // A server refusing the TLS a job requires is reachable; it is not a reason to back off.
          if (!(job.requireTls && failure.code === 'ETLS')) unreachable = true;
          continue;
        }
        this.failures = 0;
        this.trips = 0;
        return pool.send(lease, job, host.name);
      }
    }
    if (unreachable) this.recordFailure();
    return deferAll(job, last, lastMx);
  }

  private recordFailure(): void {
    this.failures++;
    if (this.failures < FAILURES_BEFORE_BACKOFF) return;
    const backoff = Math.min(this.options.backoffInitialMs * 2 ** this.trips, this.options.backoffMaxMs);
    this.trips++;
    this.downUntil = Date.now() + backoff;
  }

  private backoffReply(): string | null {
    if (Date.now() >= this.downUntil) return null;
    return `451 4.4.1 Herald: destination ${this.key} in back-off after repeated connection failures until ${new Date(this.downUntil).toISOString()}`;
  }

  private pool(mx: string, address: string): AddressPool {
    const key = `${mx}|${address}`;
    const pool = this.pools.get(key) ?? new AddressPool(mx, address, this.options);
    this.pools.set(key, pool);
    return pool;
  }
}

/**
 * Connections to one address of one MX host, reused for up to `messagesPerConnection`
 * transactions. Built on nodemailer's SMTPConnection rather than its pool transport so that a
 * connection failure (try the next address) is told apart from a failure inside a transaction
 * (never resent elsewhere: the server may have the message), and per-recipient replies survive.
 */
class AddressPool {
  private readonly idle: Lease[] = [];
  private readonly open = new Set<SMTPConnection>();

  constructor(
    private readonly mx: string,
    private readonly address: string,
    private readonly options: DestinationOptions,
  ) {}

  /** An idle connection (a secured one if TLS is required), or a new one; rejects on connection failures. */
  async acquire(requireTls: boolean): Promise<Lease> {
    const index = this.idle.findIndex((lease) => lease.connection.secure || !requireTls);
    if (index < 0) return this.connect(requireTls);
    const [lease] = this.idle.splice(index, 1);
    clearTimeout(lease.idleTimer);
    return lease;
  }

  /** One transaction for every recipient of the job; each recipient gets its own outcome. */
  send(lease: Lease, job: DeliveryJob, mx: string): Promise<RecipientResult[]> {
    const envelope: TrackedEnvelope = { from: job.envelopeFrom, to: [...job.recipients] };
    return new Promise((resolve) => {
      lease.connection.send(envelope, job.message, (error, info) => {
        this.release(lease, !error);
        resolve(error ? failureResults(job, error, envelope, mx) : successResults(job, info, mx));
      });
    });
  }

  /** QUITs idle connections politely, closing any that do not answer within the command timeout. */
  async close(): Promise<void> {
    const quit = ({ connection, idleTimer }: Lease) =>
      new Promise<void>((resolve) => {
        clearTimeout(idleTimer);
        connection.once('end', resolve);
        connection.quit();
        setTimeout(() => connection.close(), this.options.commandTimeoutMs).unref();
      });
    await Promise.all(this.idle.splice(0).map(quit));
  }

  private release(lease: Lease, healthy: boolean): void {
    lease.messages++;
    // After a failed transaction the session state is uncertain; a fresh connection is cheaper than RSET logic.
    if (!healthy || lease.messages >= this.options.messagesPerConnection || !this.open.has(lease.connection)) {
      lease.connection.quit();
      return;
    }
    lease.idleTimer = setTimeout(() => this.retire(lease), IDLE_MS).unref();
    this.idle.push(lease);
  }

  private retire(lease: Lease): void {
    const index = this.idle.indexOf(lease);
    if (index >= 0) this.idle.splice(index, 1);
    lease.connection.quit();
  }

  /**
   * Connects to the address itself: nodemailer must not resolve the MX name through the system
   * resolver. STARTTLS is opportunistic unless the job requires it, and certificates are not
   * verified (as most MTAs do without MTA-STS or DANE): unauthenticated TLS still beats plaintext.
   */
  private connect(requireTls: boolean): Promise<Lease> {
    const connection = new SMTPConnection({
      host: this.address,
      port: this.options.port,
      name: this.options.hostname,
      connectionTimeout: this.options.connectTimeoutMs,
      greetingTimeout: this.options.greetingTimeoutMs,
      socketTimeout: this.options.commandTimeoutMs,
      requireTLS: requireTls,
      opportunisticTLS: !requireTls,
      tls: { servername: this.mx, rejectUnauthorized: false },
      logger: false,
    });
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve({ connection, messages: 0 });
      };
      // Errors after the handshake also reach the send callback; this listener keeps them from crashing.
      connection.on('error', (error) => settle(error));
      connection.once('end', () => {
        this.open.delete(connection);
        const index = this.idle.findIndex((lease) => lease.connection === connection);
        if (index >= 0) clearTimeout(this.idle.splice(index, 1)[0].idleTimer);
        settle(new Error('Connection closed before the session started'));
      });
      connection.connect((error) => {
        if (!error) this.open.add(connection);
        settle(error);
      });
    });
  }
}

function successResults(job: DeliveryJob, info: SMTPConnection.SentMessageInfo, mx: string): RecipientResult[] {
  const accepted = new Set(info.accepted.map((address) => address.toLowerCase()));
  const refusals = refusalsByRecipient(info.rejectedErrors);
  return job.recipients.map((recipient) => {
    if (accepted.has(recipient.toLowerCase())) return { recipient, outcome: { kind: 'delivered', response: info.response, mx } };
    const reply = refusals.get(recipient.toLowerCase()) ?? `451 4.3.0 Herald: no reply for ${recipient}`;
    return { recipient, outcome: refusalOutcome(reply, mx) };
  });
}

/**
 * A refused transaction: recipients refused at RCPT keep their own reply; the others share the
 * reply that ended it (MAIL FROM, DATA, or the end of data). No reply at all (a dropped
 * connection or a timeout mid-transaction) defers everyone.
 */
function failureResults(job: DeliveryJob, error: SMTPConnection.SMTPError, envelope: TrackedEnvelope, mx: string): RecipientResult[] {
  if (!error.response || !error.responseCode) return deferAll(job, `451 4.4.2 ${mx}: ${error.message}`, mx);
  const shared = error.response;
  const refusals = refusalsByRecipient((error as { rejectedErrors?: RecipientError[] }).rejectedErrors ?? envelope.rejectedErrors);
  return job.recipients.map((recipient) => ({ recipient, outcome: refusalOutcome(refusals.get(recipient.toLowerCase()) ?? shared, mx) }));
}

function refusalsByRecipient(errors: RecipientError[] | undefined): Map<string, string> {
  const replies = (errors ?? []).filter((error) => error.recipient && error.response);
  return new Map(replies.map((error) => [String(error.recipient).toLowerCase(), String(error.response)]));
}

function refusalOutcome(reply: string, mx: string): RecipientOutcome {
  const { code } = parseSmtpReply(reply);
  if (code !== null && code >= 500) return { kind: 'bounced', bounce: classifyRefusal(reply), mx };
  return { kind: 'deferred', response: reply, mx };
}
