import { heraldBounce } from '../bounce-classification';
import type { Admission, Bounce, DeliveryJob, RecipientResult, Transmitter } from '../delivery.types';
import { deferAll, Destination, handBack, WaitingRoom } from './destination';
import { MxResolver, type MxHost } from './mx-resolver';

export interface TransmitterOptions {
  /** EHLO name. */
  hostname: string;
  /** The MX port: 25 in production, one shared loopback port in tests. */
  port: number;
  /** `ip` or `ip:port`; empty means the system's resolvers. */
  dnsServers: string[];
  dnsTimeoutMs: number;
  /** How long MX answers are reused; 0 disables the cache. */
  mxCacheMs: number;
  /** SMTP transactions at once per destination (also the connections per MX address). */
  connectionsPerDestination: number;
  messagesPerConnection: number;
  /** Jobs waiting per destination beyond which new ones are handed back unattempted. */
  queuePerDestination: number;
  /** Jobs waiting in all destinations beyond which a waiting job keeps its caller's slot (default: no limit). */
  queuePerTransmitter?: number;
  /** Bytes of built messages waiting in all destinations beyond which a waiting job keeps its caller's slot (default: no limit). */
  queueBytesPerTransmitter?: number;
  /** Covers the whole session setup: TCP, the greeting and STARTTLS. */
  connectTimeoutMs: number;
  greetingTimeoutMs: number;
  /** Inactivity allowed while waiting for any reply, the end-of-data reply included. */
  commandTimeoutMs: number;
  /** Consecutive failures (connection, greeting, 421, dropped session) that suspend a destination (default 3). */
  failuresBeforeBackoff?: number;
  /** First suspension of a failing destination; doubles on each further one (default 10 s). */
  backoffInitialMs?: number;
  /** Longest suspension (default 5 min). */
  backoffMaxMs?: number;
  /** Destinations kept before idle ones are forgotten (default 5,000): a worker meets many domains over its life. */
  maxDestinations?: number;
}

const ADMITTED: Admission = { kind: 'admitted' };

/** What `routed` says of a domain whose mail goes to no destination (null MX, no such domain). */
const NO_DESTINATION = '';

export interface TransmitterLogger {
  warn(msg: string): void;
  debug?(msg: string): void;
}

/**
 * Delivers jobs straight to recipients' MX hosts: resolves the domain itself (nodemailer does no
 * MX lookup), decides DNS-level bounces and deferrals, and hands everything else to the sender
 * actor of the destination, keyed by MX host set so domains hosted together share limits.
 */
export class SmtpTransmitter implements Transmitter {
  private readonly resolver: MxResolver;
  private readonly destinations = new Map<string, Destination>();
  /** The destination each recently routed domain went to: what `admit` knows without a DNS lookup. */
  private readonly routed = new Map<string, string>();
  /** MX lookups `admit` is waiting for, by domain. */
  private readonly learning = new Map<string, Promise<void>>();
  /** Places `admit` holds per email, until its jobs arrive or `release`. */
  private readonly reservations = new Map<string, Set<Destination>>();
  private readonly room: WaitingRoom;
  private closed = false;
  private roomListener: (emailIds: string[]) => void = () => undefined;

  constructor(
    private readonly options: TransmitterOptions,
    private readonly logger?: TransmitterLogger,
  ) {
    this.resolver = new MxResolver({ servers: options.dnsServers, timeoutMs: options.dnsTimeoutMs, cacheMs: options.mxCacheMs });
    this.room = new WaitingRoom(options.queuePerTransmitter ?? Infinity, options.queueBytesPerTransmitter ?? Infinity);
  }

  async deliver(job: DeliveryJob, waiting?: () => void): Promise<RecipientResult[]> {
    try {
      return await this.route(job, waiting);
    } catch (error) {
      // The contract says never reject: an unexpected failure is a deferral, retried later.
      this.logger?.warn(`delivery of ${job.emailId} to ${job.domain} failed unexpectedly: ${String(error)}`);
      return deferAll(job, `451 4.3.0 Herald: ${String(error)}`, null);
    }
  }

  /**
   * Reserves a place for the email's job in the destination of each of its domains (a domain not
   * seen lately is looked up first, so that the first emails of a large send are counted too).
   * Waitlisted when one of them is full: nothing stays reserved, and the email is named to the
   * `onRoom` listener once that destination has room for it.
   */
  async admit(emailId: string, domains: string[], called = false): Promise<Admission> {
    await Promise.all(domains.filter((domain) => !this.routed.has(domain)).map((domain) => this.learn(domain)));
    if (this.closed || this.reservations.has(emailId)) return ADMITTED;
    const held = new Set<Destination>();
    let expectedWaitMs = 0;
    for (const domain of domains) {
      const key = this.routed.get(domain);
      const destination = key === undefined ? undefined : this.destinations.get(key);
      if (!destination || held.has(destination)) continue;
      const waitMs = destination.reserve(emailId, called);
      if (waitMs) expectedWaitMs = Math.max(expectedWaitMs, waitMs);
      else held.add(destination);
    }
    if (expectedWaitMs) {
      held.forEach((destination) => destination.unreserve());
      return { kind: 'waitlisted', expectedWaitMs };
    }
    if (held.size) this.reservations.set(emailId, held);
    return ADMITTED;
  }

  /** Remembers the destination of a domain (none for a domain that accepts no mail); a lookup that failed is tried again next time. */
  private learn(domain: string): Promise<void> {
    let lookup = this.learning.get(domain);
    if (!lookup) {
      lookup = this.resolver
        .resolve(domain)
        .then(
          (resolution) => {
            if (resolution.kind === 'hosts' && !this.closed) this.remember(domain, this.destination(resolution.hosts).key);
            else if (resolution.kind === 'null-mx' || resolution.kind === 'no-domain') this.remember(domain, NO_DESTINATION);
          },
          () => undefined,
        )
        .finally(() => this.learning.delete(domain));
      this.learning.set(domain, lookup);
    }
    return lookup;
  }

  /** `listener` is given the emails `admit` turned away once there is room for them (one listener). */
  onRoom(listener: (emailIds: string[]) => void): void {
    this.roomListener = listener;
  }

  /** Gives back the places `admit` held for the email that its jobs did not take. */
  release(emailId: string): void {
    this.reservations.get(emailId)?.forEach((destination) => destination.unreserve());
    this.reservations.delete(emailId);
  }

  /** Stops taking jobs, hands back queued ones as not attempted, waits for transactions in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.destinations.values()].map((destination) => destination.close()));
  }

  stats(): { destinations: number; queued: number; active: number } {
    let queued = 0;
    let active = 0;
    for (const destination of this.destinations.values()) {
      const counts = destination.stats();
      queued += counts.queued;
      active += counts.active;
    }
    return { destinations: this.destinations.size, queued, active };
  }

  private async route(job: DeliveryJob, waiting?: () => void): Promise<RecipientResult[]> {
    if (this.closed) return handBack(job);
    const resolution = await this.resolver.resolve(job.domain);
    switch (resolution.kind) {
      case 'null-mx':
        return bounceAll(
          job,
          heraldBounce(
            'Permanent',
            'General',
            'The recipient domain accepts no email (null MX).',
            `smtp; 556 5.1.10 ${job.domain} publishes a null MX (RFC 7505)`,
          ),
        );
      case 'no-domain':
        return bounceAll(
          job,
          heraldBounce('Permanent', 'General', 'The recipient domain does not exist.', `smtp; 550 5.1.2 ${job.domain}: domain does not exist`),
        );
      case 'temporary':
        this.logger?.debug?.(`MX lookup for ${job.domain} deferred: ${resolution.reason}`);
        return deferAll(job, `451 4.4.3 Herald: ${resolution.reason}`, null);
      case 'hosts':
        // The resolver may have taken long enough for close() to have started.
        if (this.closed) return handBack(job);
        return this.deliverTo(this.destination(resolution.hosts), job, resolution.hosts, waiting);
    }
  }

  /** The job takes the place its email holds in the destination, if any. */
  private deliverTo(destination: Destination, job: DeliveryJob, hosts: MxHost[], waiting?: () => void): Promise<RecipientResult[]> {
    this.remember(job.domain, destination.key);
    const held = this.reservations.get(job.emailId);
    const reserved = held?.delete(destination) ?? false;
    if (reserved) destination.unreserve();
    if (held && !held.size) this.reservations.delete(job.emailId);
    return destination.deliver(job, hosts, waiting, reserved);
  }

  private remember(domain: string, key: string): void {
    if (this.routed.get(domain) === key) return;
    this.routed.delete(domain);
    // Oldest first: a domain not routed for a while is looked up again before its email is admitted.
    if (this.routed.size >= (this.options.maxDestinations ?? 5_000) * 4) this.routed.delete(this.routed.keys().next().value!);
    this.routed.set(domain, key);
  }

  /** Past `maxDestinations`, the idle destinations (and their pools) are dropped; busy or backing-off ones stay. */
  private forgetIdleDestinations(): void {
    if (this.destinations.size < (this.options.maxDestinations ?? 5_000)) return;
    for (const [key, destination] of this.destinations) {
      if (!destination.isIdle()) continue;
      this.destinations.delete(key);
      void destination.close();
    }
  }

  private destination(hosts: MxHost[]): Destination {
    const key = hosts
      .map((host) => host.name)
      .sort()
      .join(',');
    let destination = this.destinations.get(key);
    if (!destination) {
      this.forgetIdleDestinations();
      destination = new Destination(
        key,
        {
          hostname: this.options.hostname,
          port: this.options.port,
          connections: this.options.connectionsPerDestination,
          messagesPerConnection: this.options.messagesPerConnection,
          queueLimit: this.options.queuePerDestination,
          connectTimeoutMs: this.options.connectTimeoutMs,
          greetingTimeoutMs: this.options.greetingTimeoutMs,
          commandTimeoutMs: this.options.commandTimeoutMs,
          failuresBeforeBackoff: this.options.failuresBeforeBackoff ?? 3,
          backoffInitialMs: this.options.backoffInitialMs ?? 10_000,
          backoffMaxMs: this.options.backoffMaxMs ?? 300_000,
        },
        this.room,
        (emailIds) => this.roomListener(emailIds),
      );
      this.destinations.set(key, destination);
    }
    return destination;
  }
}

function bounceAll(job: DeliveryJob, bounce: Bounce): RecipientResult[] {
  return job.recipients.map((recipient) => ({ recipient, outcome: { kind: 'bounced', bounce, mx: null } }));
}
