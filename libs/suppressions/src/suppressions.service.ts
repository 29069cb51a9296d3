import { Injectable } from '@nestjs/common';
import { HeraldError, isUuid, newId } from '@herald/core';
import type { Transaction } from '@herald/database';
import { SuppressionEvents } from './suppression-events';
import {
  normalizeSuppressedAddress,
  validateAddSuppression,
  validateBatchAdd,
  validateBatchRemove,
  validateSuppressionListQuery,
  validateSuppressionSearchQuery,
} from './suppression-input.validation';
import {
  type AddedSuppressions,
  type DeletedSuppression,
  presentDeletedSuppression,
  presentSuppression,
  presentSuppressionList,
  type RemovedSuppressions,
  type SuppressionBody,
  type SuppressionList,
} from './suppression.presenter';
import type { Suppression, SuppressionOrigin } from './suppression.types';
import { SuppressionsRepository } from './suppressions.repository';

const notFound = () => new HeraldError('not_found', 'Suppression not found');

/**
 * The team's suppression list: the /suppressions API, and the checks and entries of the
 * delivery engine (isSuppressed before a send, suppress after a hard bounce or a complaint).
 */
@Injectable()
export class SuppressionsService {
  constructor(
    private readonly repository: SuppressionsRepository,
    private readonly events: SuppressionEvents,
  ) {}

  /** Adds an address by hand; an address listed already is answered as it is (no event). */
  async add(teamId: string, body: unknown, homeRegion?: string): Promise<SuppressionBody> {
    const email = validateAddSuppression(body);
    const entry = await this.events.change({ type: 'suppression.added', teamId, homeRegion }, async (tx) => {
      const { entry, created } = await this.repository.addManual(teamId, newId(), email, tx);
      return { result: entry, announce: created ? [entry] : [] };
    });
    return presentSuppression(entry);
  }

  async addMany(teamId: string, body: unknown, homeRegion?: string): Promise<AddedSuppressions> {
    const emails = validateBatchAdd(body);
    const entries = await this.events.change({ type: 'suppression.added', teamId, homeRegion }, async (tx) => {
      const all: Suppression[] = [];
      const added: Suppression[] = [];
      for (const email of emails) {
        const { entry, created } = await this.repository.addManual(teamId, newId(), email, tx);
        all.push(entry);
        if (created) added.push(entry);
      }
      return { result: all, announce: added };
    });
    return { data: entries.map(presentSuppression) };
  }

  /** Removes by emails or ids; what is not on the list is left out of the answer. */
  async removeMany(teamId: string, body: unknown, homeRegion?: string): Promise<RemovedSuppressions> {
    const by = validateBatchRemove(body);
    const removed = await this.events.change({ type: 'suppression.removed', teamId, homeRegion }, async (tx) => {
      const deleted = await this.repository.deleteMany(teamId, by, tx);
      return { result: deleted, announce: deleted };
    });
    return { data: removed.map(presentDeletedSuppression) };
  }

  async list(teamId: string, query: unknown): Promise<SuppressionList> {
    return presentSuppressionList(await this.repository.listPage(teamId, validateSuppressionListQuery(query)));
  }

  /** The dashboard's list: the REST list narrowed to the addresses that contain `q` (see SuppressionsRepository.listPage). */
  async search(teamId: string, query: unknown): Promise<SuppressionList> {
    return presentSuppressionList(await this.repository.listPage(teamId, validateSuppressionSearchQuery(query)));
  }

  async get(teamId: string, idOrEmail: string): Promise<SuppressionBody> {
    return presentSuppression(await this.find(teamId, idOrEmail));
  }

  async remove(teamId: string, idOrEmail: string, homeRegion?: string): Promise<DeletedSuppression> {
    const key = identifier(idOrEmail);
    const by = 'id' in key ? { ids: [key.id] } : { emails: [key.email] };
    const [removed] = await this.events.change({ type: 'suppression.removed', teamId, homeRegion }, async (tx) => {
      const deleted = await this.repository.deleteMany(teamId, by, tx);
      return { result: deleted, announce: deleted };
    });
    if (!removed) throw notFound();
    return presentDeletedSuppression(removed);
  }

  /** Which of these recipient addresses (any case, `Name <addr>` accepted) are suppressed, lowercased. */
  async isSuppressed(teamId: string, addresses: string[]): Promise<Set<string>> {
    const emails = [...new Set(addresses.map(normalizeSuppressedAddress).filter((e): e is string => e !== null))];
    return new Set(await this.repository.suppressedAmong(teamId, emails));
  }

  /**
   * Suppresses an address after a hard bounce or a complaint (or by hand). An address listed
   * already takes the new origin, source and reason. Publishes suppression.added either way:
   * the address has been suppressed (again) by this email.
   */
  async suppress(
    teamId: string,
    email: string,
    origin: SuppressionOrigin,
    sourceId: string | null = null,
    reason: string | null = null,
  ): Promise<Suppression> {
    const { result, publish } = await this.repository.transaction((tx) => this.suppressWithin(tx, teamId, email, origin, sourceId, reason));
    await publish();
    return result;
  }

  /**
   * The same in the caller's transaction `tx` (a worker records a hard bounce and the suppression
   * it causes in one commit): `publish` announces suppression.added once `tx` has committed.
   */
  async suppressWithin(
    tx: Transaction,
    teamId: string,
    email: string,
    origin: SuppressionOrigin,
    sourceId: string | null = null,
    reason: string | null = null,
  ): Promise<{ result: Suppression; publish: () => Promise<void> }> {
    const address = normalizeSuppressedAddress(email);
    if (!address) throw new HeraldError('validation_error', `Cannot suppress ${JSON.stringify(email)}: not an email address.`);
    if (sourceId !== null && !isUuid(sourceId)) throw new HeraldError('validation_error', 'The source id must be a valid UUID.');
    return this.events.changeWithin(tx, { type: 'suppression.added', teamId }, async (tx) => {
      const { entry } = await this.repository.upsert(teamId, newId(), address, origin, sourceId, reason, tx);
      return { result: entry, announce: [entry] };
    });
  }

  private async find(teamId: string, idOrEmail: string): Promise<Suppression> {
    const key = identifier(idOrEmail);
    const entry = 'id' in key ? await this.repository.getById(teamId, key.id) : await this.repository.getByEmail(teamId, key.email);
    if (!entry) throw notFound();
    return entry;
  }
}

/**
 * The path segment of /suppressions/:idOrEmail. The SDK encodes it (encodeURIComponent); the
 * router decodes it once, and a client that encoded it twice is decoded again here.
 */
export function identifier(segment: string): { id: string } | { email: string } {
  let value = segment.trim();
  if (!isUuid(value) && !value.includes('@') && /%[0-9a-f]{2}/i.test(value)) {
    try {
      value = decodeURIComponent(value).trim();
    } catch {
      // Not an encoding: taken as it is.
    }
  }
  if (isUuid(value)) return { id: value.toLowerCase() };
  const email = normalizeSuppressedAddress(value);
  if (!email) throw new HeraldError('invalid_parameter', 'The suppression must be given by its id (a UUID) or its email address.');
  return { email };
}
