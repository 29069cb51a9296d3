import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { JetStreamPublisher, trackingHitsSubject } from '@herald/bus';
import { GroupCommit, newId } from '@herald/core';
import type { EngagementHit } from '@herald/messages';
import { MetricsService } from '@herald/observability';
import { AnswerDeadlines } from './answer-deadlines';
import { MachineClassifier } from './machine-classifier';
import { encodeHits, MAX_USER_AGENT } from './tracking-hits';
import { TrackingRecorder } from './tracking-recorder';
import { TRACKING_CONFIG, TrackingConfig } from './tracking.config';
import { TrackingKeys, type TrackingKind } from './tracking-token';

export interface HitRequest {
  ipAddress: string;
  userAgent: string;
  /** False for a request that is no open or click (a HEAD: scanners probe links with it, browsers never navigate with it). */
  record?: boolean;
}

/** A verified hit: where a click goes (null for an open). A token that does not verify gets no Hit (404). */
export interface Hit {
  location: string | null;
}

/** Hits in one message of the tracking stream at most (a hit is at most ~3.5 KB: well under NATS' 1 MB payload). */
const HITS_PER_MESSAGE = 128;
/**
 * Publishes awaiting their acks at once: the hits answered meanwhile share the next message, and
 * a message starts only once the requests read in the same turn of the event loop have all been
 * verified (GroupCommit's `gather`), instead of the first of them going alone. A message (and its
 * ack, its consumer delivery and ack, each a socket write) costs far more than a hit in it, so
 * hits share messages; but with one publish at a time every answer waited for the message before
 * its own as well, and the process sat idle between acks (tracking bench, 2026-11-29: ~12 hits a
 * message, 6.0–6.6k redirects/s at 124–134 µs of CPU each). Four at a time: 8.0–8.4k/s at 98–101 µs.
 */
const PUBLISHES_IN_FLIGHT = 4;
/** Hits waiting for a durable home (the stream's ack, or Postgres when NATS fails) beyond which new ones are dropped, counted and logged. */
const MAX_PENDING = 50_000;
const RECORD_ATTEMPTS = 8;

/**
 * Opens and clicks as they arrive at the tracking host. A hit answers only when its token
 * verifies (else 404, nothing recorded), and goes only to the URL the token signed.
 *
 * Recording is off the redirect: the answer waits only for the hit to be durable on the
 * region's tracking stream (a JetStream publish and its ack; the hits answered together share one
 * message), and the stream's consumer (TrackingRecorder, in the api role) writes the events in
 * large transactions. A redirect so costs a token check, a classification and a share of one
 * publish, and a burst of opens is absorbed by the stream instead of Postgres. Should the
 * publish fail (NATS down), the hit is written to Postgres directly, retried with back-off. An
 * answer waits for one or the other up to TRACKING_RECORD_WAIT_MS, then goes anyway: a click is
 * not held hostage to an outage; such hits are counted (`herald_tracking_hits_unconfirmed_total`)
 * and drained on shutdown.
 */
@Injectable()
export class TrackingService implements OnModuleDestroy {
  private readonly logger = new Logger(TrackingService.name);
  private readonly keys: TrackingKeys;
  private readonly classifier: MachineClassifier;
  private readonly queue: GroupCommit<EngagementHit, void>;
  private readonly deadlines: AnswerDeadlines;
  private readonly subject: string;
  private readonly pending = new Set<Promise<void>>();
  private lastFallbackLog = 0;
  private readonly hits;
  private readonly hitSeries = new Map<string, { inc(): void }>();
  private readonly dropped;
  private readonly unconfirmed;

  constructor(
    @Inject(TRACKING_CONFIG.token) config: TrackingConfig,
    private readonly jetstream: JetStreamPublisher,
    private readonly recorder: TrackingRecorder,
    metrics: MetricsService,
  ) {
    this.keys = TrackingKeys.fromConfig(config);
    this.classifier = new MachineClassifier({
      appleProxyRanges: config.TRACKING_APPLE_PROXY_RANGES,
      scannerWindowSeconds: config.TRACKING_SCANNER_WINDOW_SECONDS,
    });
    this.deadlines = new AnswerDeadlines(config.TRACKING_RECORD_WAIT_MS);
    this.subject = trackingHitsSubject(config.NATS_NAMESPACE, config.HERALD_REGION);
    this.queue = new GroupCommit({ maxInFlight: PUBLISHES_IN_FLIGHT, maxItems: HITS_PER_MESSAGE, gather: true }, (hits) => this.publish(hits));
    this.hits = metrics.counter('herald_tracking_hits_total', 'Tracking hits answered, by kind and outcome', ['kind', 'outcome']);
    this.dropped = metrics.counter(
      'herald_tracking_hits_dropped_total',
      'Verified hits not recorded (too many were waiting, or recording kept failing)',
      [],
    );
    this.unconfirmed = metrics.counter(
      'herald_tracking_hits_unconfirmed_total',
      'Hits answered before they were durable (neither the tracking stream nor Postgres confirmed within TRACKING_RECORD_WAIT_MS)',
      [],
    );
  }

  /** Verifies the token, hands the hit over (see the class), and answers where to send the client; null for 404. */
  async hit(kind: TrackingKind, token: string, request: HitRequest): Promise<Hit | null> {
    const claims = this.keys.verify(kind, token);
    if (!claims || (claims.kind === 'click' && !/^https?:\/\//i.test(claims.url))) {
      this.hitCounter(kind, 'not_found').inc();
      return null;
    }
    const location = claims.kind === 'click' ? claims.url : null;
    if (request.record === false) return { location };
    const at = new Date();
    const userAgent = request.userAgent.slice(0, MAX_USER_AGENT);
    const reason = this.classifier.reason({
      ipAddress: request.ipAddress,
      userAgent,
      kind,
      sinceDeliveryMs: at.getTime() - claims.signedAt.getTime(),
    });
    this.hitCounter(kind, reason ? 'machine' : 'human').inc();
    const durable = this.handOver({
      id: newId(),
      kind,
      emailId: claims.emailId,
      position: claims.position,
      link: claims.kind === 'click' ? { index: claims.link, url: claims.url } : null,
      ipAddress: request.ipAddress,
      userAgent,
      at,
      machine: reason !== null,
      reason,
    });
    if (!(await this.deadlines.settlesWithin(durable))) this.unconfirmed.inc();
    return { location };
  }

  /** Waits (up to `timeoutMs`) for the hits still being handed over. */
  async onModuleDestroy(timeoutMs = 10_000): Promise<void> {
    await new AnswerDeadlines(timeoutMs).settlesWithin(Promise.allSettled([...this.pending]));
    if (this.pending.size) this.logger.warn(`${this.pending.size} tracking hits were not recorded before shutdown`);
  }

  /** Resolves once the hit is on the tracking stream or, that failing, in Postgres (or given up on: counted, logged). */
  private handOver(hit: EngagementHit): Promise<void> {
    if (this.pending.size >= MAX_PENDING) {
      this.dropped.inc();
      this.logger.warn(`tracking hit of email ${hit.emailId} dropped: ${MAX_PENDING} hits are waiting to be recorded`);
      return Promise.resolve();
    }
    // One reaction per outcome (not a catch, then a finally): this runs for every open and click.
    const work: Promise<void> = this.queue.submit(hit).then(
      () => void this.pending.delete(work),
      (error: unknown) => {
        // Once per outage rather than once per hit.
        if (Date.now() - this.lastFallbackLog > 10_000) {
          this.lastFallbackLog = Date.now();
          this.logger.warn(`tracking hits not queued (${(error as Error).message}): recording them in Postgres directly`);
        }
        return this.recordDirectly(hit).finally(() => this.pending.delete(work));
      },
    );
    this.pending.add(work);
    return work;
  }

  /** The hits counter's series of a kind and outcome, bound once: labelling on every hit costs a hash of the labels. */
  private hitCounter(kind: TrackingKind, outcome: 'human' | 'machine' | 'not_found'): { inc(): void } {
    const key = `${kind}:${outcome}`;
    let series = this.hitSeries.get(key);
    if (!series) this.hitSeries.set(key, (series = this.hits.labels({ kind, outcome })));
    return series;
  }

  private async publish(hits: EngagementHit[]): Promise<void[]> {
    // The batch's own id: a publish retried after a lost ack is stored once.
    await this.jetstream.publish(this.subject, encodeHits(hits), newId());
    return hits.map(() => undefined);
  }

  private async recordDirectly(hit: EngagementHit): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.recorder.recordDirectly(hit);
      } catch (error) {
        if (attempt >= RECORD_ATTEMPTS) {
          this.dropped.inc();
          this.logger.error(`tracking hit of email ${hit.emailId} not recorded after ${attempt} attempts: ${(error as Error).message}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 30_000)));
      }
    }
  }
}
