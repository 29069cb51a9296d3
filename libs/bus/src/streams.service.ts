import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { JetStreamApiError, JetStreamManager, RetentionPolicy, StorageType, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { BackgroundRetry, DeferredChange, jetStreamMessage, jetStreamUnavailable, retryInBackground, whileJetStreamForms } from './jetstream-boot';
import { NatsService } from './nats.service';
import { RegionAvailability } from './region-availability';
import { eventSubjects, eventsStreamName, sendStreamName, sendSubjects, trackingHitsSubject, trackingStreamName } from './subjects';
import { BUS_CONFIG, BusConfig } from './bus.config';

const SECOND_NS = 1e9;
/** Longer than a publish retry takes, so a retried publish is recognised as the same message. */
const DUPLICATE_WINDOW_NS = 2 * 60 * SECOND_NS;
/** Events outlive a consumer outage of a few days; Postgres keeps the lasting record. */
const EVENTS_MAX_AGE_NS = 7 * 24 * 3600 * SECOND_NS;

const STREAM_NOT_FOUND = 10059;
/** How long a scale waits for a stream's move to its region to finish (small streams move in seconds). */
const MOVE_WAIT_MS = 30_000;

type DesiredStream = Pick<StreamConfig, 'name' | 'subjects' | 'retention' | 'storage' | 'num_replicas' | 'duplicate_window' | 'max_age'> &
  Partial<Pick<StreamConfig, 'placement'>>;

const COMPARED: (keyof DesiredStream)[] = ['retention', 'storage', 'num_replicas', 'duplicate_window', 'max_age'];

/**
 * Makes the send, events and tracking streams of every configured region exist with Herald's settings.
 * Every region's streams, not only this role's: an API in one region publishes to the streams
 * of the others. Safe to run from many processes at once: creating an identical stream is a
 * no-op on the server, and a lost creation race falls back to comparing and updating.
 *
 * A stream that exists with Herald's settings is only read (its info, which its own servers
 * answer), never sent to the meta leader: on a supercluster the meta group spans every region's
 * JetStream servers, and with one region of two down it has no leader, so nothing can be created
 * or changed, while the surviving region's streams still answer and take messages. At boot:
 *
 * - The home region's streams first, retried while JetStream forms (BOOT_WAIT_MS at most, then a
 *   clear error): the role cannot work without them. One that differs and cannot be changed now
 *   is used as it is, and changed in the background once JetStream can.
 * - Then the other regions': one that does not answer (its region down) or cannot be made now does
 *   not stop the boot. It is logged, retried in the background, and when it is a send stream,
 *   that region's sends are refused (RegionAvailability) until it answers.
 */
@Injectable()
export class StreamsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(StreamsService.name);
  private readonly retries = new Map<string, BackgroundRetry>();
  private closed = false;

  constructor(
    @Inject(BUS_CONFIG.token) private readonly config: BusConfig,
    private readonly nats: NatsService,
    private readonly regions: RegionAvailability,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.ensureStreams();
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const retry of this.retries.values()) retry.stop();
    this.retries.clear();
  }

  /** The streams this deployment needs, by region. */
  desiredStreams(): DesiredStream[] {
    return this.config.HERALD_REGIONS.flatMap((region) => this.regionStreams(region));
  }

  /** The streams of one region. */
  private regionStreams(region: string): DesiredStream[] {
    const ns = this.config.NATS_NAMESPACE;
    // On a supercluster each region's streams live on that region's servers (tagged
    // `region:<region>`), so sending in eu-west-1 never depends on another region's servers.
    const common = {
      storage: StorageType.File,
      num_replicas: this.config.NATS_REGION_REPLICAS[region] ?? this.config.NATS_REPLICAS,
      duplicate_window: DUPLICATE_WINDOW_NS,
      ...(this.config.NATS_PLACE_BY_REGION && { placement: regionPlacement(region) }),
    };
    return [
      {
        ...common,
        name: sendStreamName(ns, region),
        subjects: [sendSubjects(ns, region)],
        // A send command is work: once a worker acks it, it is gone.
        retention: RetentionPolicy.Workqueue,
        max_age: 0,
      },
      {
        ...common,
        name: eventsStreamName(ns, region),
        subjects: [eventSubjects(ns, region)],
        // Events are facts read by several independent consumers, so they stay until they age out.
        retention: RetentionPolicy.Limits,
        max_age: EVENTS_MAX_AGE_NS,
      },
      {
        ...common,
        name: trackingStreamName(ns, region),
        subjects: [trackingHitsSubject(ns, region)],
        // Opens and clicks the tracking host answered and has yet to record: work, like sends.
        retention: RetentionPolicy.Workqueue,
        max_age: 0,
      },
    ];
  }

  async ensureStreams(): Promise<void> {
    const jsm = await this.nats.jetstreamManager();
    const home = this.config.HERALD_REGION;
    const own = this.regionStreams(home);
    const deferred = await whileJetStreamForms(
      `making the streams of ${home}`,
      () => Promise.all(own.map((desired) => this.ensureStream(jsm, desired))),
      (message, delay) => this.logger.warn(`JetStream is not available yet (${message}); trying again in ${delay} ms`),
    );
    own.forEach((desired, i) => {
      if (deferred[i]) this.changeLater(desired, deferred[i]);
    });
    const others = this.config.HERALD_REGIONS.filter((region) => region !== home);
    await Promise.all(others.map((region) => this.ensureOtherRegion(jsm, region)));
  }

  /** Another region's streams: what does not answer now is retried in the background, without holding up the boot. */
  private async ensureOtherRegion(jsm: JetStreamManager, region: string): Promise<void> {
    const streams = this.regionStreams(region);
    const outcomes = await Promise.allSettled(streams.map((desired) => this.ensureStream(jsm, desired)));
    const failed = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    const fatal = failed.find((error) => !jetStreamUnavailable(error));
    if (fatal) throw fatal;
    const unanswered: string[] = [];
    outcomes.forEach((outcome, i) => {
      const desired = streams[i]!;
      if (outcome.status === 'fulfilled') {
        if (outcome.value) this.changeLater(desired, outcome.value);
        return;
      }
      unanswered.push(desired.name);
      this.retryLater(desired);
    });
    if (!failed.length) return;
    const reason = jetStreamMessage(failed[0]);
    this.logger.warn(`region ${region}'s streams ${unanswered.join(', ')} cannot be reached or made now (${reason}); trying again in the background`);
    const send = sendStreamName(this.config.NATS_NAMESPACE, region);
    if (unanswered.includes(send)) this.regions.streamUnreachable(region, `its stream ${send}: ${reason}`);
  }

  /** A stream that exists but differs, and JetStream cannot change it now: used as it is until the background retry can. */
  private changeLater(desired: DesiredStream, deferred: DeferredChange): void {
    this.logger.warn(
      `stream ${desired.name} differs from this release's settings in ${deferred.changed.join(', ')}, but JetStream cannot change it now ` +
        `(${jetStreamMessage(deferred.error)}): carrying on with the stream as it is, and trying again in the background`,
    );
    this.retryLater(desired);
  }

  private retryLater(desired: DesiredStream): void {
    if (this.closed || this.retries.has(desired.name)) return;
    const retry = retryInBackground(
      async () => {
        if (await this.ensureStream(await this.nats.jetstreamManager(), desired)) return false;
        this.retries.delete(desired.name);
        this.logger.log(`stream ${desired.name} answers with this release's settings now`);
        return true;
      },
      (error) => {
        this.retries.delete(desired.name);
        this.logger.error(`stream ${desired.name}: ${(error as Error).message}; not trying again until the next boot`);
      },
    );
    this.retries.set(desired.name, retry);
  }

  /**
   * Makes one stream exist with its settings. Returns what differs and could not be changed
   * because JetStream is unavailable (the stream is usable as it is), or null once it is as desired.
   */
  private async ensureStream(jsm: JetStreamManager, desired: DesiredStream): Promise<DeferredChange | null> {
    let current = await this.info(jsm, desired.name);
    if (!current) {
      try {
        await jsm.streams.add(desired);
        this.logger.log(`created stream ${desired.name}`);
        return null;
      } catch (error) {
        // Another process created it first, perhaps with settings of an older release.
        current = await this.info(jsm, desired.name);
        if (!current) throw error;
      }
    }
    const changed = differences(current.config, desired);
    if (!changed.length) return null;
    try {
      if (changed.includes('placement') && changed.includes('num_replicas')) {
        // nats-server cannot move and scale a stream in one update: move it first, then scale it
        // once the move has finished.
        const replicas = current.config.num_replicas;
        await this.retryWhileMoving(() => jsm.streams.update(desired.name, { ...desired, num_replicas: replicas }));
        this.logger.log(`moving stream ${desired.name} to ${JSON.stringify(desired.placement)}`);
        await this.retryWhileMoving(() => jsm.streams.update(desired.name, desired));
      } else {
        await jsm.streams.update(desired.name, desired);
      }
      this.logger.log(`updated stream ${desired.name} (${changed.join(', ')})`);
      return null;
    } catch (error) {
      if (jetStreamUnavailable(error)) return { changed, error };
      throw new Error(`stream ${desired.name} differs in ${changed.join(', ')} and could not be updated: ${(error as Error).message}`);
    }
  }

  /**
   * Retries `update` while the server refuses it because the stream is still moving, or the
   * request times out while the servers are busy moving it (bounded).
   */
  private async retryWhileMoving(update: () => Promise<unknown>): Promise<void> {
    const deadline = Date.now() + MOVE_WAIT_MS;
    for (;;) {
      try {
        await update();
        return;
      } catch (error) {
        if (Date.now() > deadline || !/move|timeout/i.test((error as Error).message)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  private async info(jsm: JetStreamManager, name: string): Promise<StreamInfo | null> {
    try {
      return await jsm.streams.info(name);
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === STREAM_NOT_FOUND) return null;
      throw error;
    }
  }
}

/** The server tag of a region's NATS servers (`server_tags` in deploy/local/nats and k8s). */
export const regionTag = (region: string): string => `region:${region}`;

/** Where a region's streams are placed on a supercluster: on the servers tagged with the region. */
export const regionPlacement = (region: string): { cluster: string; tags: string[] } => ({ cluster: '', tags: [regionTag(region)] });

function differences(current: StreamConfig, desired: DesiredStream): string[] {
  const changed = COMPARED.filter((key) => current[key] !== desired[key]);
  const subjects = (s: string[] | undefined) => [...(s ?? [])].sort().join(' ');
  if (subjects(current.subjects) !== subjects(desired.subjects)) changed.push('subjects');
  // A stream made before NATS_PLACE_BY_REGION was turned on sits wherever it was created: the
  // update moves it to its region's servers (nats-server moves a stream whose placement changes).
  // Without a desired placement (one server, one cluster) a placed stream is left where it is.
  // A stream placed by an earlier release in the cluster named after its region is there already.
  const placement = (p: DesiredStream['placement']) => `${p?.cluster ?? ''}|${[...(p?.tags ?? [])].sort().join(' ')}`;
  const inRegionCluster = desired.placement?.tags.some((tag) => tag === regionTag(current.placement?.cluster ?? ''));
  if (desired.placement && placement(current.placement) !== placement(desired.placement) && !inRegionCluster) changed.push('placement');
  return changed;
}
