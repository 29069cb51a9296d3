import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { GroupCommit, newId } from '@herald/core';
import { EmailEventOutbox, EmailStore, type EngagementHit } from '@herald/messages';
import { MetricsService } from '@herald/observability';
import { MachineClassifier } from './machine-classifier';
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

/** Hits waiting to be recorded beyond which each answer waits for its own commit (TRACKING_RECORD_WAIT_MS). */
const BACKLOG = 2_000;
/** Hits waiting to be recorded (the database slow or down) beyond which new ones are dropped, counted and logged. */
const MAX_PENDING = 50_000;
const RECORD_ATTEMPTS = 8;
/** A user agent is stored and sent in events up to this many characters (a header may hold 16 KB). */
const MAX_USER_AGENT = 1024;

/**
 * Opens and clicks as they arrive at the tracking host. A hit answers only when its token
 * verifies (else 404, nothing recorded), and goes only to the URL the token signed.
 *
 * Recording (the choice: redirect first, record through a buffered writer): the answer does not
 * wait for Postgres. The hit joins this process's writer, which commits the hits arriving
 * together in one transaction (group commit, through the email record's owner, libs/messages),
 * retries a failed commit with back-off, and is drained on shutdown; once committed, the event is
 * in the outbox and reaches the stream and webhooks even if the process dies next. Only while
 * the writer is behind (more than BACKLOG hits waiting: Postgres slow or down) does an answer
 * wait for its own commit, up to TRACKING_RECORD_WAIT_MS: back-pressure that bounds memory and
 * what a crash could lose (the hits not yet committed), without holding a click hostage to a
 * dead database for longer than that.
 */
@Injectable()
export class TrackingService implements OnModuleDestroy {
  private readonly logger = new Logger(TrackingService.name);
  private readonly keys: TrackingKeys;
  private readonly classifier: MachineClassifier;
  private readonly writer: GroupCommit<EngagementHit, void>;
  private readonly pending = new Set<Promise<void>>();
  private readonly hits;
  private readonly dropped;

  constructor(
    @Inject(TRACKING_CONFIG.token) private readonly config: TrackingConfig,
    private readonly store: EmailStore,
    private readonly outbox: EmailEventOutbox,
    metrics: MetricsService,
  ) {
    this.keys = TrackingKeys.fromConfig(config);
    this.classifier = new MachineClassifier({
      appleProxyRanges: config.TRACKING_APPLE_PROXY_RANGES,
      scannerWindowSeconds: config.TRACKING_SCANNER_WINDOW_SECONDS,
    });
    this.writer = new GroupCommit({ maxInFlight: 2, maxItems: 500 }, (hits) => this.recordMany(hits));
    this.hits = metrics.counter('herald_tracking_hits_total', 'Tracking hits answered, by kind and outcome', ['kind', 'outcome']);
    this.dropped = metrics.counter(
      'herald_tracking_hits_dropped_total',
      'Verified hits not recorded (the queue was full or recording kept failing)',
      [],
    );
  }

  /** Verifies the token, records the hit (see the class), and answers where to send the client; null for 404. */
  async hit(kind: TrackingKind, token: string, request: HitRequest): Promise<Hit | null> {
    const claims = this.keys.verify(kind, token);
    if (!claims || (claims.kind === 'click' && !/^https?:\/\//i.test(claims.url))) {
      this.hits.inc({ kind, outcome: 'not_found' });
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
    this.hits.inc({ kind, outcome: reason ? 'machine' : 'human' });
    const recorded = this.record({
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
    if (this.pending.size > BACKLOG) await waitAtMost(recorded, this.config.TRACKING_RECORD_WAIT_MS);
    return { location };
  }

  /** Waits (up to `timeoutMs`) for the hits still being recorded. */
  async onModuleDestroy(timeoutMs = 10_000): Promise<void> {
    await waitAtMost(
      Promise.allSettled([...this.pending]).then(() => undefined),
      timeoutMs,
    );
    if (this.pending.size) this.logger.warn(`${this.pending.size} tracking hits were not recorded before shutdown`);
  }

  private record(hit: EngagementHit): Promise<void> {
    if (this.pending.size >= MAX_PENDING) {
      this.dropped.inc();
      this.logger.warn(`tracking hit of email ${hit.emailId} dropped: ${MAX_PENDING} hits are waiting to be recorded`);
      return Promise.resolve();
    }
    const work: Promise<void> = this.recordWithRetry(hit).finally(() => this.pending.delete(work));
    this.pending.add(work);
    return work;
  }

  private async recordWithRetry(hit: EngagementHit): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writer.submit(hit);
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

  private async recordMany(hits: EngagementHit[]): Promise<void[]> {
    this.outbox.publish(await this.store.recordEngagement(hits));
    return hits.map(() => undefined);
  }
}

/** Resolves when `work` settles or after `ms`, whichever comes first; never rejects. */
function waitAtMost(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}
