import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { GroupCommit, PeriodicJob } from '@herald/core';
import { MetricsService } from '@herald/observability';
import { METRICS_CONFIG, type MetricsConfig } from './metrics.config';
import { ReputationGuardrail } from './reputation-guardrail.service';
import { type CountedEvent, countEvent, type StreamedEvent } from './rollup-counts';
import { RollupsRepository } from './rollups.repository';

/** Events per transaction: large enough that a backlog costs a few statements per thousand events. */
const MAX_BATCH = 1000;
/** Counted ids are kept longer than the events stream keeps events (7 days), then forgotten. */
const COUNTED_RETENTION_MS = 8 * 24 * 3_600_000;
const PURGE_INTERVAL_MS = 3_600_000;
const PURGE_BATCH = 10_000;

/**
 * The rollups of the region's events: each event handed to `count` is added to its hour's row
 * exactly once (see RollupsRepository.apply), many events per transaction: those arriving while
 * a transaction runs share the next one. After a batch with bounces or complaints, the
 * guardrail judges their domains. `count` resolves once the event is committed, so the consumer
 * acks only counted events; a failure rejects it and the stream redelivers.
 */
@Injectable()
export class RollupsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RollupsService.name);
  private readonly commits: GroupCommit<CountedEvent, void>;
  private readonly purge: PeriodicJob;
  private readonly counted;

  constructor(
    @Inject(METRICS_CONFIG.token) private readonly config: MetricsConfig,
    private readonly rollups: RollupsRepository,
    private readonly guardrail: ReputationGuardrail,
    metrics: MetricsService,
  ) {
    this.counted = metrics.counter('herald_metric_events_counted_total', 'Events added to the rollups (duplicates left out)', []);
    this.commits = new GroupCommit({ maxInFlight: 2, maxItems: MAX_BATCH }, (events) => this.commit(events));
    this.purge = new PeriodicJob(
      () => this.purgeCounted(),
      () => PURGE_INTERVAL_MS,
      (error) => this.logger.warn(`purging counted event ids failed: ${error.message}`),
    );
  }

  onApplicationBootstrap(): void {
    this.purge.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.purge.stop();
  }

  /** Counts an event of this region's stream; events the rollups do not count resolve at once. */
  async count(event: StreamedEvent): Promise<void> {
    const counted = countEvent(event, this.config.HERALD_REGION);
    if (counted) await this.commits.submit(counted);
  }

  private async commit(events: CountedEvent[]): Promise<void[]> {
    const fresh = await this.rollups.apply(events);
    if (fresh) this.counted.inc(fresh);
    // Judged whether or not the events were new: a redelivery after a failed check checks again.
    const judged = new Map<string, { teamId: string; domain: string }>();
    for (const { key, counts } of events) {
      if (counts.bounced_hard || counts.bounced_soft || counts.complained) judged.set(`${key.teamId}|${key.domain}`, key);
    }
    for (const { teamId, domain } of judged.values()) await this.guardrail.check(teamId, domain);
    return events.map(() => undefined);
  }

  private async purgeCounted(): Promise<number> {
    const before = new Date(Date.now() - COUNTED_RETENTION_MS);
    let total = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH; total += n) n = await this.rollups.purgeCounted(before, PURGE_BATCH);
    return total;
  }
}
