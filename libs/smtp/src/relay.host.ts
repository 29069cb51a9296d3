import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { NatsService } from '@herald/bus';
import { HealthRegistry } from '@herald/observability';
import { SMTP_CONFIG, type SmtpConfig } from './smtp.config';
import { BoundListener, ListenerMode, SmtpRelay } from './smtp-relay';
import { SmtpSubmissions } from './submission/smtp-submissions.service';
import { loadTlsCredentials } from './tls-certificate';

/** The relay's greeting and EHLO name: SMTP_HOSTNAME, default `smtp.<region>.<MAIL_DOMAIN>`. */
export const relayHostname = (config: Pick<SmtpConfig, 'SMTP_HOSTNAME' | 'HERALD_REGION' | 'MAIL_DOMAIN'>): string =>
  config.SMTP_HOSTNAME ?? `smtp.${config.HERALD_REGION}.${config.MAIL_DOMAIN}`;

const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]']);
/** Two listeners on the same port collide when their addresses are equal or either is a wildcard. */
const overlap = (a: string, b: string): boolean => a === b || WILDCARDS.has(a) || WILDCARDS.has(b);

/** The configuration mistakes that would only show as EADDRINUSE, said in the config's words. */
export function relayConfigProblems(config: Pick<SmtpConfig, 'SMTP_PORTS' | 'SMTP_HOST' | 'BOUNCE_MX_HOST' | 'BOUNCE_MX_PORT'>): string[] {
  const problems: string[] = [];
  for (const { port } of config.SMTP_PORTS) {
    if (port !== 0 && port === config.BOUNCE_MX_PORT && overlap(config.SMTP_HOST, config.BOUNCE_MX_HOST)) {
      problems.push(
        `SMTP_PORTS: port ${port} is also BOUNCE_MX_PORT and SMTP_HOST (${config.SMTP_HOST}) overlaps BOUNCE_MX_HOST (${config.BOUNCE_MX_HOST}); ` +
          'give the relay and the bounce MX different addresses or ports',
      );
    }
  }
  return problems;
}

/**
 * Runs the SMTP relay of this region: the SMTP_PORTS listeners, each message handed to the
 * send path (SmtpSubmissions). It stops before NATS drains, so a message being submitted
 * still gets dispatched.
 */
@Injectable()
export class RelayHost implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('SmtpRelay');
  private relay: SmtpRelay | null = null;

  constructor(
    @Inject(SMTP_CONFIG.token) private readonly config: SmtpConfig,
    private readonly submissions: SmtpSubmissions,
    private readonly nats: NatsService,
    private readonly health: HealthRegistry,
  ) {}

  onModuleInit(): void {
    this.nats.beforeDrain(() => this.close());
    // Not ready until the listeners are bound (the ops server answers before them: a slow start,
    // a self-signed certificate being made, would otherwise send clients to a closed port), nor
    // once they are closed for shutdown.
    this.health.register('smtp_relay', async () => this.relay !== null);
  }

  async onApplicationBootstrap(): Promise<void> {
    const { config } = this;
    const problems = relayConfigProblems(config);
    if (problems.length > 0) throw new Error(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    const hostname = relayHostname(config);
    const tls = await loadTlsCredentials({
      certFile: config.SMTP_TLS_CERT,
      keyFile: config.SMTP_TLS_KEY,
      hostname,
      production: config.NODE_ENV === 'production',
    });
    if (tls.selfSigned) this.logger.warn(`SMTP relay: no SMTP_TLS_CERT / SMTP_TLS_KEY, using a self-signed certificate for ${hostname}`);
    this.relay = await SmtpRelay.start({
      host: config.SMTP_HOST,
      listeners: config.SMTP_PORTS,
      hostname,
      tls,
      maxBytes: config.MAX_EMAIL_BYTES,
      idleTimeoutMs: config.SMTP_IDLE_TIMEOUT_MS,
      sessionTimeoutMs: config.SMTP_SESSION_TIMEOUT_MS,
      connectionLimits: { total: config.SMTP_MAX_CONNECTIONS, perClient: config.SMTP_MAX_CONNECTIONS_PER_CLIENT },
      submissions: this.submissions,
      logger: { warn: (m) => this.logger.warn(m), log: (m) => this.logger.log(m) },
    });
    const ports = this.relay.listeners.map((l) => `${l.port} (${l.mode})`).join(', ');
    this.logger.log(`SMTP relay ${hostname} listening on ${config.SMTP_HOST}: ${ports}`);
  }

  /** The bound listeners, in SMTP_PORTS order (port 0 in config becomes the port picked). */
  listeners(): BoundListener[] {
    if (!this.relay) throw new Error('the SMTP relay is not started');
    return this.relay.listeners;
  }

  /** The first bound port of a mode. */
  port(mode: ListenerMode): number {
    if (!this.relay) throw new Error('the SMTP relay is not started');
    return this.relay.port(mode);
  }

  private async close(): Promise<void> {
    const relay = this.relay;
    this.relay = null;
    await relay?.close();
  }
}
