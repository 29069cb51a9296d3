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
 * A domain is judged at most this often: a backlog of bounces then costs the guardrail a few
 * queries a second, not a few per batch. Bounces arriving in between are judged by a check at
 * the end of the interval.
 */
const GUARDRAIL_INTERVAL_MS = 1000;

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
  /** When each team|domain was last judged, and the ones waiting for their next check. */
  private readonly judgedAt = new Map<string, number>();
  private readonly waiting = new Map<string, NodeJS.Timeout>();

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
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
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
    const domains = new Map<string, { teamId: string; domain: string }>();
    for (const { key, counts } of events) {
      if (counts.bounced_hard || counts.bounced_soft || counts.complained) domains.set(`${key.teamId}|${key.domain}`, key);
    }
    for (const [id, { teamId, domain }] of domains) {
      const last = this.judgedAt.get(id) ?? 0;
      if (Date.now() - last >= GUARDRAIL_INTERVAL_MS) {
        await this.guardrail.check(teamId, domain);
        this.judged(id);
      } else this.judgeLater(id, teamId, domain, last + GUARDRAIL_INTERVAL_MS - Date.now());
    }
    return events.map(() => undefined);
  }

  private judged(id: string): void {
    const now = Date.now();
    // Forget domains judged long enough ago that the interval no longer applies to them.
    if (this.judgedAt.size >= 10_000) for (const [other, at] of this.judgedAt) if (now - at >= GUARDRAIL_INTERVAL_MS) this.judgedAt.delete(other);
    this.judgedAt.set(id, now);
  }

  /** One check of the domain once its interval is over (a failure waits for its next bounce or complaint). */
  private judgeLater(id: string, teamId: string, domain: string, delayMs: number): void {
    if (this.waiting.has(id)) return;
    const timer = setTimeout(() => {
      this.waiting.delete(id);
      this.guardrail.check(teamId, domain).then(
        () => this.judged(id),
        (error: Error) => this.logger.warn(`judging ${domain} failed: ${error.message}`),
      );
    }, delayMs);
    this.waiting.set(id, timer);
  }

  private async purgeCounted(): Promise<number> {
    const before = new Date(Date.now() - COUNTED_RETENTION_MS);
    let total = 0;
    for (let n = PURGE_BATCH; n === PURGE_BATCH; total += n) n = await this.rollups.purgeCounted(before, PURGE_BATCH);
    return total;
  }
}
