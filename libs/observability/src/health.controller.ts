import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HealthRegistry, LIVENESS_BODY } from './health.registry';

/** Probes for roles that serve HTTP; answers as the ops server does, from the same registry. */
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthRegistry) {}

  /** Answering at all proves the event loop turns, which is all liveness means. */
  @Get('live')
  live(): typeof LIVENESS_BODY {
    return LIVENESS_BODY;
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    const report = await this.health.readiness();
    reply.status(report.ready ? 200 : 503);
    return report.body;
  }
}
