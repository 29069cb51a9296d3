import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { NatsService } from '@herald/bus';
import { SmtpTransmitter } from '../transport';
import { DELIVERY_CONFIG, DeliveryConfig, deliveryHostname } from '../delivery.config';

/**
 * The worker's SMTP transmitter, built from config. It stops with the NATS connection's drain,
 * alongside the send consumer: queued jobs are handed back unstarted, in-flight SMTP
 * transactions finish, and their outcomes are recorded before the connection closes.
 */
@Injectable()
export class SmtpTransmitterHost implements OnModuleInit {
  readonly transmitter: SmtpTransmitter;

  constructor(
    @Inject(DELIVERY_CONFIG.token) config: DeliveryConfig,
    private readonly nats: NatsService,
  ) {
    const logger = new Logger(SmtpTransmitter.name);
    this.transmitter = new SmtpTransmitter(
      {
        hostname: deliveryHostname(config),
        port: config.DELIVERY_PORT,
        dnsServers: config.DNS_SERVERS,
        dnsTimeoutMs: config.DNS_TIMEOUT_MS,
        mxCacheMs: config.DOMAIN_CACHE_MS,
        connectionsPerDestination: config.DELIVERY_CONNECTIONS_PER_DESTINATION,
        messagesPerConnection: config.DELIVERY_MESSAGES_PER_CONNECTION,
        queuePerDestination: config.DELIVERY_QUEUE_PER_DESTINATION,
        queuePerTransmitter: config.DELIVERY_QUEUE_PER_WORKER,
        queueBytesPerTransmitter: config.DELIVERY_QUEUE_BYTES_PER_WORKER,
        connectTimeoutMs: config.DELIVERY_CONNECT_TIMEOUT_MS,
        greetingTimeoutMs: config.DELIVERY_GREETING_TIMEOUT_MS,
        commandTimeoutMs: config.DELIVERY_COMMAND_TIMEOUT_MS,
        failuresBeforeBackoff: config.DELIVERY_BACKOFF_AFTER_FAILURES,
        backoffInitialMs: config.DELIVERY_BACKOFF_INITIAL_MS,
        backoffMaxMs: config.DELIVERY_BACKOFF_MAX_MS,
      },
      { warn: (m: string) => logger.warn(m), debug: (m: string) => logger.debug(m) },
    );
  }

  onModuleInit(): void {
    this.nats.beforeDrain(() => this.transmitter.close());
  }
}
