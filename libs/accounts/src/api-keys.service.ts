import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { HeraldError, newId } from '@herald/core';
import { isPlanId } from '@herald/limits';
import { parseOrThrow } from '@herald/http';
import { requiredName, requireUuidParam } from './account-input.validation';
import { ACCOUNTS_CONFIG, type AccountsConfig } from './accounts.config';
import { createApiKeyBody, MAX_KEY_NAME } from './api-key-input.validation';
import { ApiKeyCache } from './api-key.cache';
import { type ApiKeyListItem, presentApiKey } from './api-key.presenter';
import { generateApiKey, parseApiKey, verifySecret } from './api-key-format';
import { ApiKeysRepository, ApiKeyWithTeam } from './api-keys.repository';
import { Principal } from './principal.types';

export interface CreateApiKeyInput {
  name: string;
  permission?: string;
  /** Only with sending_access: restricts the key to one domain. */
  domain_id?: string | null;
}

const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const MISSING_API_KEY =
  'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY';
const INVALID_API_KEY = 'API key is invalid';

/** What the cache holds per public id. `lastUsedAt` throttles the last_used_at writes. */
interface KeyEntry {
  principal: Principal;
  secretHash: Buffer;
  lastUsedAt: number | null;
}

@Injectable()
export class ApiKeysService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ApiKeysService.name);
  /**
   * Successful lookups, by public id. Deleting a key drops its entry in this process only: other
   * processes keep accepting a deleted key until their entry expires (API_KEY_CACHE_SECONDS).
   * Unknown public ids are not cached; tokens with a bad checksum never get this far, and
   * concurrent lookups of one id share a single query (`loading`), so a burst costs one query.
   */
  private readonly cache: ApiKeyCache<KeyEntry>;
  private readonly loading = new Map<string, Promise<KeyEntry | null>>();
  private readonly pendingTouches = new Set<Promise<void>>();

  constructor(
    @Inject(ACCOUNTS_CONFIG.token) config: AccountsConfig,
    private readonly keys: ApiKeysRepository,
  ) {
    this.cache = new ApiKeyCache(config.API_KEY_CACHE_SECONDS * 1000);
  }

  /** The token is in the result only here: the database keeps its hash. */
  async create(teamId: string, input: CreateApiKeyInput): Promise<{ id: string; token: string }> {
    const { name, permission, domainId } = parseOrThrow(createApiKeyBody, input);
    if (domainId && !(await this.keys.teamHasDomain(teamId, domainId))) throw domainNotFound();
    const { token, publicId, secretHash } = generateApiKey();
    const id = newId();
    try {
      await this.keys.create(teamId, { id, name, permission, domainId, publicId, secretHash });
    } catch (error) {
      // The domain was deleted between the check and the insert.
      if (isDomainForeignKeyViolation(error)) throw domainNotFound();
      throw error;
    }
    return { id, token };
  }

  /** Newest first. */
  async list(teamId: string): Promise<ApiKeyListItem[]> {
    const keys = await this.keys.listByTeam(teamId);
    return keys.map(presentApiKey);
  }

  /** Newest first, with each key's permission and domain (the dashboard shows them; Resend's list does not). */
  async listWithScope(teamId: string): Promise<(ApiKeyListItem & { permission: string; domain_id: string | null })[]> {
    const keys = await this.keys.listByTeam(teamId);
    return keys.map((key) => ({ ...presentApiKey(key), permission: key.permission, domain_id: key.domainId }));
  }

  /** `name` as PATCH /api-keys/:id carries it (see updateApiKeyBody). */
  async rename(teamId: string, id: string, name: unknown): Promise<void> {
    requireUuidParam(id);
    const renamed = await this.keys.rename(teamId, id, requiredName(name, MAX_KEY_NAME));
    if (!renamed) throw notFound();
  }

  async remove(teamId: string, id: string): Promise<void> {
    requireUuidParam(id);
    const deleted = await this.keys.delete(teamId, id);
    if (!deleted) throw notFound();
    this.cache.delete(deleted.publicId);
    // A lookup that started before the delete must not put the key back into the cache.
    this.loading.delete(deleted.publicId);
  }

  /** Authenticates an `Authorization` header value (`Bearer <key>`). */
  async authenticate(authorizationHeader: string | undefined): Promise<Principal> {
    const token = bearerToken(authorizationHeader);
    if (!token) throw new HeraldError('missing_api_key', MISSING_API_KEY);
    return this.authenticateToken(token);
  }

  /**
   * Authenticates a bare key (the SMTP password, or the bearer token). On a warm cache this is
   * one map lookup and one SHA-256: no database round trip.
   */
  async authenticateToken(token: string): Promise<Principal> {
    const parsed = parseApiKey(token);
    if (!parsed) throw new HeraldError('invalid_api_key', INVALID_API_KEY);
    const cached = this.cache.get(parsed.publicId);
    // Renewed in the background ahead of its expiry, so steady traffic never waits for the control plane's database.
    if (cached && this.cache.renewDue(parsed.publicId)) void this.load(parsed.publicId).catch(() => undefined);
    const entry = cached ?? (await this.load(parsed.publicId));
    // The secret is checked on every request, cached or not: the cache holds the hash, not a verdict.
    if (!entry || !verifySecret(token, entry.secretHash)) {
      throw new HeraldError('invalid_api_key', INVALID_API_KEY);
    }
    this.noteUse(entry);
    return entry.principal;
  }

  /** Lets last_used_at writes still in flight finish before the database connection closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.pendingTouches]);
  }

  private load(publicId: string): Promise<KeyEntry | null> {
    const inFlight = this.loading.get(publicId);
    if (inFlight) return inFlight;
    const loading: Promise<KeyEntry | null> = this.keys
      .getByPublicId(publicId)
      .then((row) => {
        const entry = row ? toEntry(row) : null;
        // Still ours unless remove() dropped it meanwhile: then the row may be gone already.
        if (entry && this.loading.get(publicId) === loading) this.cache.set(publicId, entry);
        return entry;
      })
      .finally(() => {
        if (this.loading.get(publicId) === loading) this.loading.delete(publicId);
      });
    this.loading.set(publicId, loading);
    return loading;
  }

  /**
   * Records use at most once a minute per key and process, off the request's path: the request
   * does not wait for the write, and a failed write is logged, never surfaced. Concurrent and
   * cross-process writes are harmless because the repository never moves the time backwards.
   */
  private noteUse(entry: KeyEntry): void {
    const now = Date.now();
    if (entry.lastUsedAt !== null && now - entry.lastUsedAt < LAST_USED_WRITE_INTERVAL_MS) return;
    entry.lastUsedAt = now;
    const { teamId, keyId } = entry.principal;
    const touch = this.keys
      .touchLastUsed(teamId, keyId, new Date(now))
      .catch((error: unknown) => this.logger.warn(`could not record use of API key ${keyId}: ${String(error)}`))
      .finally(() => this.pendingTouches.delete(touch));
    this.pendingTouches.add(touch);
  }
}

/** The token of `Bearer <token>` (scheme case-insensitive, as HTTP schemes are), or null. */
function bearerToken(header: string | undefined): string | null {
  const value = header?.trim() ?? '';
  const gap = value.search(/[ \t]/);
  if (gap < 0 || value.slice(0, gap).toLowerCase() !== 'bearer') return null;
  return value.slice(gap).trim() || null;
}

function toEntry(row: ApiKeyWithTeam): KeyEntry {
  const { team } = row;
  if (!isPlanId(team.plan)) {
    // Teams are created with a known plan; an unknown one was edited by hand. Guessing limits
    // for it would be worse than refusing its requests loudly.
    throw new HeraldError('application_error', `Team ${team.id} has an unknown plan "${team.plan}"`);
  }
  const principal: Principal = Object.freeze({
    teamId: row.teamId,
    keyId: row.id,
    permission: row.permission,
    domainId: row.domainId,
    team: Object.freeze({ id: team.id, plan: team.plan, homeRegion: team.homeRegion, rateLimit: team.rateLimit }),
  });
  return { principal, secretHash: row.secretHash, lastUsedAt: row.lastUsedAt?.getTime() ?? null };
}

function domainNotFound(): HeraldError {
  return new HeraldError('validation_error', 'Domain not found: the `domain_id` field must be the id of one of your domains.');
}

/** Postgres foreign-key violation on api_keys.domain_id. */
function isDomainForeignKeyViolation(error: unknown): boolean {
  const e = (error ?? {}) as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const pg = e.driverError ?? e;
  return pg.code === '23503' && pg.constraint === 'api_keys_domain_fk';
}

function notFound(): HeraldError {
  return new HeraldError('not_found', 'API key not found');
}
