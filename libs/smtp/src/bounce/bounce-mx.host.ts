import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { NatsService } from '@herald/bus';
import { HealthRegistry } from '@herald/observability';
import { UnsubscribeService } from '@herald/broadcasts';
import { deliveryHostname, LateReports, verpKey } from '@herald/delivery';
import { SMTP_CONFIG, type SmtpConfig } from '../smtp.config';
import { BounceMx } from './bounce-mx';

/** Reports are small; a DSN returning a whole large message is cut by the sender or refused here. */
const MAX_REPORT_BYTES = 10 * 1024 * 1024;

/**
 * Runs the bounce MX of this region (BOUNCE_MX_HOST:BOUNCE_MX_PORT): DSNs and complaint reports
 * sent to Return-Path addresses are handed to delivery's LateReports, which turns them into
 * events and suppressions; messages to broadcast emails' List-Unsubscribe mailboxes (same
 * domains) unsubscribe their contact. It stops before NATS drains, so a report being recorded still
 * publishes its events.
 */
@Injectable()
export class BounceMxHost implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(BounceMx.name);
  private server: BounceMx | null = null;

  constructor(
    @Inject(SMTP_CONFIG.token) private readonly config: SmtpConfig,
    private readonly reports: LateReports,
    private readonly unsubscribes: UnsubscribeService,
    private readonly nats: NatsService,
    private readonly health: HealthRegistry,
  ) {}

  onModuleInit(): void {
    this.nats.beforeDrain(() => this.close());
    // Not ready until it listens, nor once it has closed for shutdown (as the relay).
    this.health.register('bounce_mx', async () => this.server !== null);
  }

  async onApplicationBootstrap(): Promise<void> {
    const { config } = this;
    this.server = await BounceMx.start({
      host: config.BOUNCE_MX_HOST,
      port: config.BOUNCE_MX_PORT,
      hostname: deliveryHostname(config),
      maxBytes: MAX_REPORT_BYTES,
      connectionLimits: { total: config.SMTP_MAX_CONNECTIONS, perClient: config.SMTP_MAX_CONNECTIONS_PER_CLIENT },
      key: verpKey(config.DKIM_ENCRYPTION_KEY === undefined ? undefined : Buffer.from(config.DKIM_ENCRYPTION_KEY, 'base64')),
      onReport: (report) => this.reports.record(report),
      unsubscribe: { accepts: (address) => this.unsubscribes.isMailbox(address), unsubscribe: (address) => this.unsubscribes.byMailbox(address) },
      logger: { warn: (m) => this.logger.warn(m), log: (m) => this.logger.log(m) },
    });
    this.logger.log(`bounce MX listening on ${config.BOUNCE_MX_HOST}:${this.server.port}`);
  }

  /** The port it listens on (0 in config picks a free one). */
  port(): number {
    if (!this.server) throw new Error('the bounce MX is not started');
    return this.server.port;
  }

  private async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    await server?.close();
  }
}
