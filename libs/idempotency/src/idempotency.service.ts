import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { HeraldError, heraldClock } from '@herald/core';
import { isRedisUnavailable, RedisService, RedisUnavailableError } from '@herald/redis';
import { IdempotencyRecord, IdempotencyRecords } from './idempotency-records.repository';
import { IDEMPOTENCY_CONFIG, type IdempotencyConfig } from './idempotency.config';
import { Begin, IdempotencyScope, Lease, Replay } from './idempotency.types';
import { RegistryEntry, decodeEntry, encodeDone, encodeInFlight } from './registry-entry.codec';
import { claimScript, releaseScript, swapScript } from './registry.scripts';

const DIFFERENT_PAYLOAD = 'Same idempotency key used with a different request payload. Please use a new key.';
const IN_PROGRESS = 'Another request with the same idempotency key is currently in progress. Please retry later.';
/** How often disowned markers are released while Redis answers, and how many are remembered. */
const RELEASE_INTERVAL_MS = 1000;
const MAX_DISOWNED = 10_000;
const UNCHECKED =
  'Idempotency keys cannot be checked right now, and this request was not processed. ' +
  'Please retry with the same key after the number of seconds in the Retry-After header.';

/**
 * The idempotency registry: one logical Redis shared by every region (the fast path and the
 * lock), backed by `idempotency_records` in Postgres (the durable truth). The full flow and the
 * reasoning behind it are in libs/idempotency/README.md.
 */
@Injectable()
export class IdempotencyService implements OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyService.name);
  private readonly ttlMs: number;
  private readonly inFlightMs: number;
  /** Markers whose claim went unanswered (see `disown`), by marker: the Redis key and the marker's deadline. */
  private readonly disowned = new Map<string, { key: string; deadline: number }>();
  private releaseTimer: NodeJS.Timeout | undefined;
  private releasing = false;
  /** Redis is in another region (REDIS_REGION): `finish` does not wait for it. */
  private readonly far: boolean;
  /** `finish`es not waited for, still on their way to Redis. */
  private readonly finishing = new Set<Promise<boolean>>();

  constructor(
    private readonly redis: RedisService,
    private readonly records: IdempotencyRecords,
    @Inject(IDEMPOTENCY_CONFIG.token) config: IdempotencyConfig,
  ) {
    this.ttlMs = config.IDEMPOTENCY_TTL_SECONDS * 1000;
    this.inFlightMs = config.IDEMPOTENCY_IN_FLIGHT_SECONDS * 1000;
    this.far = config.REDIS_REGION !== undefined && config.REDIS_REGION !== config.HERALD_REGION;
  }

  /**
   * Claims the key for this request, or answers from the registry: a replay of the first
   * response, or a 409 (different payload; first request still in flight).
   *
   * A claim that succeeds (Redis had nothing for the key: never used, expired, or Redis lost it)
   * proceeds without reading Postgres. A committed record there, if Redis lost it, is found by the
   * emails' insert, whose record conflicts with it in the same transaction (`replayCommitted`).
   * That read needs the region the request's emails go to, which only validation tells: records
   * live beside their emails, in the region's email plane (libs/database planes.ts). When Redis has
   * a final record it is trusted (a copy of a committed Postgres row); when it has a marker,
   * Postgres is asked whether that request committed (answerInFlight).
   */
  async begin(scope: IdempotencyScope, requestHash: string): Promise<Begin> {
    // The marker's deadline is counted from now, the request's start, not from when the claim
    // reaches Redis: a claim a partition delivers late (its request long answered 503) holds the
    // key only until then. Its TTL, counted by Redis from the claim, ends it too, whichever is first.
    const now = heraldClock.nowMs();
    const lease: Lease = { scope, requestHash, token: randomUUID(), deadline: now + this.inFlightMs };
    const key = this.redisKey(scope);
    let existing: RegistryEntry | null;
    try {
      existing = await this.claim(key, lease, now);
    } catch (error) {
      if (!isRedisUnavailable(error)) throw error;
      if (error.mayHaveRun) this.disown(key, lease);
      return this.beginWithoutRedis(scope, requestHash);
    }
    if (existing === null) return { kind: 'proceed', lease };
    return existing.state === 'in_flight' ? this.answerInFlight(scope, existing, requestHash) : answer(existing, requestHash);
  }

  /**
   * Places the lease's marker, or returns the entry that holds the key. A marker this process
   * disowned (its claim went unanswered and its request was refused) holds nothing: it is
   * replaced by this lease's marker, atomically, as if the key were free.
   */
  private async claim(key: string, lease: Lease, now: number): Promise<RegistryEntry | null> {
    const marker = this.marker(lease);
    const existing = await claimScript.run(this.redis, [key], [marker, this.inFlightMs, now]);
    if (existing === null) return null;
    const raw = String(existing);
    if (!this.disowned.delete(raw)) return decodeEntry(raw);
    const replaced = await swapScript.run(this.redis, [key], [raw, marker, this.inFlightMs]);
    // Someone else's entry took the disowned marker's place in between: claim once more against it.
    return replaced === 1 ? null : this.claim(key, lease, now);
  }

  /**
   * A claim that went unanswered may still land (Redis answers late, or thaws), and a marker
   * whose request failed may not be releasable then; either leaves a marker for a request that
   * was refused and will never run, and until its deadline every retry of the key would get 409
   * `concurrent_idempotent_requests`. The process remembers that marker: its next claim of the
   * key takes it over (`claim`), and once Redis answers again it is released, so retries through
   * other processes find the key free too.
   */
  private disown(key: string, lease: Lease): void {
    if (this.disowned.size >= MAX_DISOWNED) return; // the rest expire at their deadlines, as before
    this.disowned.set(this.marker(lease), { key, deadline: lease.deadline });
    this.releaseTimer ??= setInterval(() => void this.releaseDisowned(), RELEASE_INTERVAL_MS).unref();
  }

  /**
   * Deletes disowned markers while Redis answers. One that is not there (yet) is kept until its
   * deadline: a claim buffered on a dropped connection can still land after this release.
   */
  private async releaseDisowned(): Promise<void> {
    if (this.releasing) return;
    this.releasing = true;
    try {
      const now = heraldClock.nowMs();
      for (const [marker, { key, deadline }] of this.disowned) {
        if (deadline < now) this.disowned.delete(marker);
        else if (!this.redis.isAvailable) return;
        else if ((await releaseScript.run(this.redis, [key], [marker])) === 1) this.disowned.delete(marker);
      }
    } catch (error) {
      if (!isRedisUnavailable(error)) this.logger.warn(`could not release disowned idempotency markers: ${(error as Error).message}`);
    } finally {
      this.releasing = false;
      if (this.disowned.size === 0) {
        clearInterval(this.releaseTimer);
        this.releaseTimer = undefined;
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.releaseTimer);
    this.releaseTimer = undefined;
    await Promise.allSettled([...this.finishing]);
  }

  /**
   * A marker says a request holds the key. If that request has committed, Postgres has its final
   * answer (its process died between the commit and swapping the marker, or Redis froze then):
   * replay it rather than answer 409 until the marker expires. One indexed read, only on this
   * conflict path; if Postgres cannot answer, the marker's 409 stands.
   */
  private async answerInFlight(scope: IdempotencyScope, entry: RegistryEntry, requestHash: string): Promise<Replay> {
    const record = await this.records.find(scope.teamId, scope.endpoint, scope.key).catch(() => null);
    if (!record) return answer(entry, requestHash);
    return answer({ state: 'done', requestHash: record.requestHash, statusCode: record.statusCode, body: record.response }, requestHash);
  }

  /**
   * Without Redis there is no lock, so nothing may proceed; but a committed record in Postgres is
   * final, whoever holds the lock, so it is replayed (or a different payload refused with 409).
   * A key with no committed record gets 503 with Retry-After: its first request may still be in
   * flight, and a retry once Redis answers is either its replay or its one execution.
   */
  private async beginWithoutRedis(scope: IdempotencyScope, requestHash: string): Promise<Replay> {
    const record = await this.records.find(scope.teamId, scope.endpoint, scope.key);
    if (!record) throw new RedisUnavailableError('idempotency registry unreachable', UNCHECKED);
    return answer({ state: 'done', requestHash: record.requestHash, statusCode: record.statusCode, body: record.response }, requestHash);
  }

  /**
   * The request committed its record (and emails) in Postgres: replace the marker with the
   * final record for the rest of the retention window. Returns false when the lease no longer
   * owns the key (its marker expired) or Redis failed; neither is an error for the caller, whose
   * work is committed and whose record in Postgres now answers for the key.
   */
  async complete(lease: Lease, statusCode: number, body: unknown): Promise<boolean> {
    return this.swap(lease, encodeDone(lease.requestHash, statusCode, body), this.ttlMs);
  }

  /**
   * `complete` for the send path, which answers its client after it: waited for while Redis is
   * near; with Redis in another region (REDIS_REGION) the answer goes first, a round trip sooner.
   * A retry that meets the marker meanwhile is answered from the record in Postgres, committed
   * with the emails (`begin`'s conflict path), so it is replayed, not run again. Never throws.
   */
  async finish(lease: Lease, statusCode: number, body: unknown): Promise<void> {
    const done = this.complete(lease, statusCode, body);
    if (!this.far) {
      await done;
      return;
    }
    this.finishing.add(done);
    void done.finally(() => this.finishing.delete(done));
  }

  /**
   * The request failed before committing anything: free the key so a retry can proceed. Errors
   * are not cached (a 422 for a bad field or a 429 for quota does not occupy the key), because
   * they have no side effects and the client is expected to fix the request and retry with the
   * same key. Never throws: a marker Redis cannot delete now is disowned, released once it answers.
   */
  async abandon(lease: Lease): Promise<boolean> {
    const key = this.redisKey(lease.scope);
    try {
      return (await releaseScript.run(this.redis, [key], [this.marker(lease)])) === 1;
    } catch (error) {
      // Redis failed mid-request (a quota check timed out after the claim, say): the marker is
      // released once Redis answers, not left to answer 409 until its deadline.
      if (isRedisUnavailable(error)) this.disown(key, lease);
      else this.logger.warn(`could not release idempotency key: ${(error as Error).message}`);
      return false;
    }
  }

  /**
   * For the send path after `isIdempotencyConflict`: another request committed this key first
   * (possible only when Redis lost the key, or our marker expired mid-request). Replays that
   * request's response, or throws 409 if its payload differed, and writes its record back to
   * Redis so later retries take the fast path.
   */
  async replayCommitted(lease: Lease): Promise<Replay> {
    let record: IdempotencyRecord | null;
    try {
      record = await this.records.find(lease.scope.teamId, lease.scope.endpoint, lease.scope.key);
    } catch (error) {
      await this.abandon(lease);
      throw error;
    }
    if (record) return this.replayRecord(lease, record);
    // The conflicting record expired in between: nothing to replay, and the key is free again.
    await this.abandon(lease);
    throw new HeraldError('concurrent_idempotent_requests', IN_PROGRESS);
  }

  /** Re-warms Redis with a committed record (for its remaining life) and answers from it. */
  private async replayRecord(lease: Lease, record: IdempotencyRecord): Promise<Replay> {
    const entry: RegistryEntry = {
      state: 'done',
      requestHash: record.requestHash,
      statusCode: record.statusCode,
      body: record.response,
    };
    // Herald's clock only sets how long the cache copy lives; Postgres judges expiry itself.
    const remainingMs = record.createdAt.getTime() + this.ttlMs - heraldClock.nowMs();
    const value = encodeDone(entry.requestHash, entry.statusCode, entry.body);
    if (remainingMs > 0) await this.swap(lease, value, remainingMs);
    else await this.abandon(lease);
    return answer(entry, lease.requestHash);
  }

  private async swap(lease: Lease, value: string, ttlMs: number): Promise<boolean> {
    try {
      const replaced = await swapScript.run(this.redis, [this.redisKey(lease.scope)], [this.marker(lease), value, Math.max(1, Math.ceil(ttlMs))]);
      return replaced === 1;
    } catch (error) {
      this.logger.warn(`could not record idempotent response in Redis: ${(error as Error).message}`);
      return false;
    }
  }

  private marker(lease: Lease): string {
    return encodeInFlight(lease.requestHash, lease.token, lease.deadline);
  }

  /**
   * The key is hashed: it is up to 256 arbitrary characters (including `:`), and a fixed-length
   * digest keeps Redis keys short and unambiguous. The team and endpoint stay readable.
   */
  private redisKey(scope: IdempotencyScope): string {
    const digest = createHash('sha256').update(scope.key).digest('base64url');
    return this.redis.key('idempotency', scope.teamId, scope.endpoint, digest);
  }
}

/** What a request gets when the key is already taken (in Redis or in Postgres). */
function answer(entry: RegistryEntry, requestHash: string): Replay {
  if (entry.requestHash !== requestHash) throw new HeraldError('invalid_idempotent_request', DIFFERENT_PAYLOAD);
  if (entry.state === 'in_flight') throw new HeraldError('concurrent_idempotent_requests', IN_PROGRESS);
  return { kind: 'replay', statusCode: entry.statusCode, body: entry.body };
}
