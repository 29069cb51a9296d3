import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { fastify, FastifyInstance } from 'fastify';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { HealthRegistry, LIVENESS_BODY } from './health.registry';
import { OBSERVABILITY_CONFIG, ObservabilityConfig } from './observability.config';
import { METRICS_REGISTRY } from './metrics.registry';

/**
 * The probe and scrape endpoints of a role without an HTTP server of its own (worker, webhooks,
 * smtp), on OPS_PORT. It closes in the last shutdown phase, so probes keep answering while the
 * role drains its in-flight work.
 */
@Injectable()
export class OpsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OpsServer.name);
  private server?: FastifyInstance;

  constructor(
    @Inject(OBSERVABILITY_CONFIG.token) private readonly config: ObservabilityConfig,
    private readonly health: HealthRegistry,
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const server = fastify({ logger: false });
    server.get('/health/live', async () => LIVENESS_BODY);
    server.get('/health/ready', async (_request, reply) => {
      const report = await this.health.readiness();
      return reply.code(report.ready ? 200 : 503).send(report.body);
    });
    server.get('/metrics', async (_request, reply) => {
      return reply.type(this.registry.contentType).send(await this.registry.metrics());
    });
    try {
      // All interfaces: the kubelet and Prometheus reach the pod by its IP, not by loopback.
      await server.listen({ host: '0.0.0.0', port: this.config.OPS_PORT });
    } catch (err) {
      await server.close();
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`ops server cannot listen on OPS_PORT ${this.config.OPS_PORT}: ${reason}`, { cause: err });
    }
    this.server = server;
    this.logger.log(`ops server listening on port ${this.port()}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.close();
  }

  /** The bound port, which differs from OPS_PORT when that is 0 (tests). */
  port(): number {
    const address = this.server?.server.address();
    if (!address || typeof address === 'string') throw new Error('ops server is not listening');
    return (address as AddressInfo).port;
  }
}
