import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { HeraldError } from '@herald/core';
import { BUS_CONFIG, BusConfig } from './bus.config';
import { JetStreamPublishError } from './jetstream-publisher';
import { NatsService } from './nats.service';
import { sendStreamName } from './subjects';

/** How often a region marked unreachable is probed; also the Retry-After of the sends it refuses. */
export const REGION_PROBE_MS = 1000;

/**
 * Which other regions' send streams this process can reach. A publish to another region's stream
 * that nobody answers (its NATS cluster is down, or the gateway to it is cut: "no responders"),
 * or that stream not answering when this process booted (StreamsService), marks that region
 * unreachable; from then on its sends are refused with 503 and Retry-After
 * (`assertReachable`) instead of being accepted into an outbox that cannot drain, until a probe
 * (the stream's info, every REGION_PROBE_MS) answers again. The home region is never marked: its
 * own NATS being down is the process's readiness, and the outbox's job.
 */
@Injectable()
export class RegionAvailability implements OnModuleDestroy {
  private readonly logger = new Logger(RegionAvailability.name);
  private readonly unreachable = new Map<string, NodeJS.Timeout | null>();
  private closed = false;

  constructor(
    @Inject(BUS_CONFIG.token) private readonly config: BusConfig,
    private readonly nats: NatsService,
  ) {}

  /** Throws 503 `service_unavailable` while `region`'s stream is known to be unreachable from here. */
  assertReachable(region: string): void {
    if (!this.unreachable.has(region)) return;
    throw new HeraldError(
      'service_unavailable',
      `Region ${region} cannot take new emails right now, and nothing was sent. Please retry after the number of seconds in the Retry-After header.`,
      Math.ceil(REGION_PROBE_MS / 1000),
    );
  }

  /** Told of every failed publish to a region's send stream. */
  publishFailed(region: string, error: unknown): void {
    if (!(error instanceof JetStreamPublishError) || error.reason !== 'no_stream') return;
    this.streamUnreachable(region, error.message);
  }

  /**
   * Told that a region's send stream did not answer (StreamsService at boot, its region down):
   * its sends are refused from the first, until a probe reaches the stream.
   */
  streamUnreachable(region: string, reason: string): void {
    if (region === this.config.HERALD_REGION || this.unreachable.has(region) || this.closed) return;
    this.logger.warn(`Region ${region} is unreachable (${reason}): its sends are refused until it answers again`);
    this.unreachable.set(region, null);
    this.scheduleProbe(region);
  }

  private scheduleProbe(region: string): void {
    if (this.closed) return;
    const timer = setTimeout(() => void this.probe(region), REGION_PROBE_MS);
    timer.unref();
    this.unreachable.set(region, timer);
  }

  private async probe(region: string): Promise<void> {
    try {
      const jsm = await this.nats.jetstreamManager();
      await jsm.streams.info(sendStreamName(this.config.NATS_NAMESPACE, region));
    } catch {
      return this.scheduleProbe(region);
    }
    this.unreachable.delete(region);
    this.logger.log(`Region ${region} answers again: its sends are accepted`);
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const timer of this.unreachable.values()) if (timer) clearTimeout(timer);
    this.unreachable.clear();
  }
}
