import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { configSlice, SliceOf } from '@herald/config';
import { NatsService } from '@herald/bus';
import { normalizeSuppressedAddress } from './suppression-input.validation';
import { SuppressionsRepository } from './suppressions.repository';

export const SUPPRESSION_CACHE_CONFIG = configSlice('suppression-cache', ['NATS_NAMESPACE']);
export type SuppressionCacheConfig = SliceOf<typeof SUPPRESSION_CACHE_CONFIG>;

/** A team with a longer list is not held: each check of it asks Postgres. */
export const MAX_CACHED_ENTRIES = 50_000;
/** Teams held at once, and addresses over all of them (~60 bytes each); the least recently loaded team goes first. */
const MAX_TEAMS = 2_000;
const MAX_HELD_ENTRIES = 500_000;
/**
 * A team's list is read again from Postgres after this long, whatever the events said: it bounds
 * how long an event lost between the commit and its publish (until the outbox's relay sends it)
 * can leave the cache behind.
 */
export const CACHE_TTL_MS = 60_000;

interface Team {
  /** The team's suppressed addresses (lowercase); null while loading, or when the list is too long to hold. */
  addresses: Set<string> | null;
  loading: Promise<void> | null;
  loadedAt: number;
  /** Bumped by every event for the team: a load that began before an event is not kept. */
  generation: number;
}

/**
 * The suppression check of the SMTP relay (one per RCPT TO), answered from memory: each team's
 * list is read from Postgres once, then kept current by the `suppression.added` /
 * `suppression.removed` events every change of the list publishes (SuppressionEvents, through
 * the resource event outbox), received on a core NATS subscription to every region's events.
 *
 * Postgres stays the authority: while the feed is not live (not started yet, NATS disconnected;
 * a reconnect drops every list, since events may have been missed), for a list loading or too
 * long to hold, and after CACHE_TTL_MS, the check asks Postgres, as SuppressionsService does.
 * A failure of Postgres then fails the check (the relay answers 451): it never means "not suppressed".
 */
@Injectable()
export class SuppressionCache implements OnModuleDestroy {
  private readonly logger = new Logger(SuppressionCache.name);
  private readonly teams = new Map<string, Team>();
  private feed: Subscription | null = null;
  private starting: Promise<void> | null = null;
  private live = false;
  private closed = false;

  constructor(
    @Inject(SUPPRESSION_CACHE_CONFIG.token) private readonly config: SuppressionCacheConfig,
    private readonly nats: NatsService,
    private readonly repository: SuppressionsRepository,
  ) {}

  /** Which of these addresses (any case, `Name <addr>` accepted) the team has suppressed, lowercased. */
  async isSuppressed(teamId: string, addresses: string[]): Promise<Set<string>> {
    const emails = [...new Set(addresses.map(normalizeSuppressedAddress).filter((e): e is string => e !== null))];
    if (!emails.length) return new Set();
    const list = await this.listOf(teamId);
    if (list) return new Set(emails.filter((e) => list.has(e)));
    return new Set(await this.repository.suppressedAmong(teamId, emails));
  }

  /** True while events are arriving: the lists held are current. */
  get isLive(): boolean {
    return this.live;
  }

  /** The team's list when it is held and current; starts the feed, or a load, as needed, and answers null meanwhile. */
  private async listOf(teamId: string): Promise<Set<string> | null> {
    if (!this.live) {
      this.starting ??= this.start().catch((error: unknown) => {
        this.logger.warn(`suppression events feed not started: ${(error as Error).message}`);
        this.starting = null;
      });
      return null;
    }
    let team = this.teams.get(teamId);
    if (team && !team.loading && Date.now() - team.loadedAt > CACHE_TTL_MS) {
      this.teams.delete(teamId);
      team = undefined;
    }
    if (!team) {
      team = { addresses: null, loading: null, loadedAt: 0, generation: 0 };
      this.hold(teamId, team);
      const held = team;
      team.loading = this.load(teamId, held).finally(() => (held.loading = null));
    }
    if (team.loading) await team.loading;
    return this.teams.get(teamId) === team ? team.addresses : null;
  }

  private hold(teamId: string, team: Team): void {
    if (this.teams.size >= MAX_TEAMS) this.teams.delete(this.teams.keys().next().value!);
    this.teams.set(teamId, team);
  }

  private async load(teamId: string, team: Team): Promise<void> {
    const generation = team.generation;
    try {
      const list = await this.repository.teamList(teamId, MAX_CACHED_ENTRIES + 1);
      // An event arrived meanwhile: the list read may predate it. The next check loads again.
      if (team.generation !== generation || this.teams.get(teamId) !== team) return void this.drop(teamId, team);
      team.addresses = list.length > MAX_CACHED_ENTRIES ? null : new Set(list);
      team.loadedAt = Date.now();
      this.evictBeyond(MAX_HELD_ENTRIES, teamId);
    } catch (error) {
      this.drop(teamId, team);
      this.logger.warn(`suppression list of team ${teamId} not loaded: ${(error as Error).message}`);
    }
  }

  /** Drops the oldest teams (not `keep`) while the lists held have more than `max` addresses. */
  private evictBeyond(max: number, keep: string): void {
    let held = 0;
    for (const team of this.teams.values()) held += team.addresses?.size ?? 0;
    for (const [teamId, team] of this.teams) {
      if (held <= max) return;
      if (teamId === keep || !team.addresses) continue;
      held -= team.addresses.size;
      this.teams.delete(teamId);
    }
  }

  private drop(teamId: string, team: Team): void {
    if (this.teams.get(teamId) === team) this.teams.delete(teamId);
  }

  /** Subscribes to every region's suppression events, and watches the connection: a lost event must not go unnoticed. */
  private async start(): Promise<void> {
    const nc = await this.nats.connect();
    if (this.closed) return;
    this.feed = nc.subscribe(`${this.config.NATS_NAMESPACE}.*.events.suppression.*`, {
      callback: (error, msg) => {
        if (!error) this.onEvent(msg.data);
      },
    });
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect' || status.type === 'close') this.goStale(false);
        // nats.js subscribes again on reconnect; what was published meanwhile is lost.
        if (status.type === 'reconnect') this.goStale(!this.closed);
      }
    })();
    // Once the server has the subscription, every later change reaches this process.
    await nc.flush();
    this.live = !this.closed && this.nats.isReady();
  }

  private goStale(live: boolean): void {
    this.teams.clear();
    this.live = live;
  }

  private onEvent(data: Uint8Array): void {
    let event: { type?: unknown; team_id?: unknown; data?: { email?: unknown } };
    try {
      event = JSON.parse(Buffer.from(data).toString('utf8')) as typeof event;
    } catch {
      return;
    }
    const email = event.data?.email;
    if (typeof event.team_id !== 'string' || typeof email !== 'string') return;
    const team = this.teams.get(event.team_id);
    if (!team) return;
    team.generation++;
    if (!team.addresses) return;
    const address = email.toLowerCase();
    if (event.type === 'suppression.added') team.addresses.add(address);
    else if (event.type === 'suppression.removed') team.addresses.delete(address);
    else this.teams.delete(event.team_id);
  }

  onModuleDestroy(): void {
    this.closed = true;
    this.live = false;
    this.teams.clear();
    this.feed?.unsubscribe();
  }
}
