import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { jetstream, JetStreamClient, jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { BUS_CONFIG, BusConfig } from './bus.config';

/** How long one JetStream API request (stream or consumer info, add, update) waits for its answer. */
export const JS_API_TIMEOUT_MS = 5_000;

/** Work that must finish while the connection can still publish (acks of in-flight messages). */
export type BeforeDrainHook = () => Promise<void>;

/**
 * The role's one NATS connection. Nest runs the init hooks of one module's providers
 * concurrently, so everything that needs the connection awaits `connect()` (idempotent) rather
 * than relying on hook order.
 */
@Injectable()
export class NatsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(NatsService.name);
  private nc: NatsConnection | null = null;
  private connecting: Promise<NatsConnection> | null = null;
  private js: JetStreamClient | null = null;
  private jsm: Promise<JetStreamManager> | null = null;
  private connected = false;
  private draining: Promise<void> | null = null;
  private readonly beforeDrainHooks: BeforeDrainHook[] = [];
  private readonly settleHooks: BeforeDrainHook[] = [];

  constructor(@Inject(BUS_CONFIG.token) private readonly config: BusConfig) {}

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.drain();
  }

  /** Connects once; later calls return the same connection. Fails fast if no server answers at boot. */
  connect(): Promise<NatsConnection> {
    this.connecting ??= this.open().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    return this.connecting;
  }

  /** The live connection; throws if `connect()` has not completed. */
  get connection(): NatsConnection {
    if (!this.nc) throw new Error('NATS is not connected yet (NatsService.connect() has not completed)');
    return this.nc;
  }

  jetstream(): JetStreamClient {
    this.js ??= jetstream(this.connection);
    return this.js;
  }

  /**
   * Waits for the connection, so it is safe to call from another provider's init hook. Each of its
   * requests gives up after JS_API_TIMEOUT_MS. It skips the client's check that JetStream is
   * enabled (an account info request): only the meta leader answers that, so with the meta group
   * leaderless (another region of the supercluster down) it would fail although this region's
   * streams and consumers answer their own requests. A server without JetStream still shows at
   * the first stream request (no responders).
   */
  jetstreamManager(): Promise<JetStreamManager> {
    this.jsm ??= this.connect()
      .then((nc) => jetstreamManager(nc, { checkAPI: false, timeout: JS_API_TIMEOUT_MS }))
      .catch((error: unknown) => {
        this.jsm = null;
        throw error;
      });
    return this.jsm;
  }

  /** For readiness probes: false while disconnected, reconnecting, draining or closed. */
  isReady(): boolean {
    return this.nc !== null && this.connected && !this.nc.isClosed() && !this.nc.isDraining();
  }

  /**
   * Registers work to finish before the connection drains. Consumers sharing this connection
   * (a role's JetStreamConsumers) use it: NatsService drains in the first shutdown phase, and a
   * handler still running after that could no longer ack its message.
   */
  beforeDrain(hook: BeforeDrainHook): void {
    this.beforeDrainHooks.push(hook);
  }

  /**
   * Registers a wait for outstanding publishes (their acks arrive on a subscription the drain
   * ends). It runs after every `beforeDrain` hook, since that work may still publish.
   */
  settleBeforeDrain(hook: BeforeDrainHook): void {
    this.settleHooks.push(hook);
  }

  /** Finishes registered work, then lets pending publishes and acks reach the server, then closes. */
  drain(): Promise<void> {
    this.draining ??= this.runDrain();
    return this.draining;
  }

  private async runDrain(): Promise<void> {
    await Promise.allSettled(this.beforeDrainHooks.map((hook) => hook()));
    await Promise.allSettled(this.settleHooks.map((hook) => hook()));
    const nc = this.connecting ? await this.connecting.catch(() => null) : null;
    if (nc && !nc.isClosed() && !nc.isDraining()) await nc.drain();
    this.connected = false;
  }

  private async open(): Promise<NatsConnection> {
    const nc = await connect({
      servers: this.config.NATS_URL,
      name: `herald-${this.config.HERALD_REGION}`,
      // A broker restart or failover must never leave a role permanently disconnected.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Otherwise every request (each JetStream publish) captures stack traces it never shows:
      // about 28 µs of CPU per published email (test/bench/api-bench.ts).
      noAsyncTraces: true,
    });
    this.nc = nc;
    this.connected = true;
    void this.watchStatus(nc);
    return nc;
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      switch (status.type) {
        case 'disconnect':
          this.connected = false;
          this.logger.warn(`disconnected from ${status.server}`);
          break;
        case 'reconnect':
          this.connected = true;
          this.logger.log(`reconnected to ${status.server}`);
          break;
        case 'error':
          this.logger.warn(`nats: ${status.error.message}`);
          break;
        case 'close':
          this.connected = false;
          break;
        default:
          break;
      }
    }
  }
}
