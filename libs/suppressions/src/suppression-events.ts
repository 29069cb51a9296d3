import { Injectable, Logger } from '@nestjs/common';
import type { HeraldEvent } from '@herald/bus';
import type { Transaction } from '@herald/database';
import { ResourceEventOutbox } from '@herald/outbox';
import { heraldClock, isoTimestamp, newId } from '@herald/core';
import { suppressionEventData } from './suppression.presenter';
import type { Suppression } from './suppression.types';
import { SuppressionsRepository } from './suppressions.repository';

export type SuppressionEventType = 'suppression.added' | 'suppression.removed';

/** The event envelope for a suppression fact: the entry as it is now (or was, when removed). */
export function suppressionEvent(type: SuppressionEventType, entry: Suppression, at: Date = heraldClock.now()): HeraldEvent {
  return { id: newId(), type, created_at: isoTimestamp(at), team_id: entry.teamId, data: suppressionEventData(entry) };
}

/** What a change of the list answers: its result, and the entries to announce (one event each). */
export interface SuppressionChange<T> {
  result: T;
  announce: Suppression[];
}

/** Where a change of a team's list and the events announcing it go. */
export interface SuppressionScope {
  type: SuppressionEventType;
  teamId: string;
  /** The team's home region when the caller knows it; looked up otherwise. */
  homeRegion?: string;
}

/**
 * Suppression events, for the events stream of the team's home region (the list is team-wide,
 * across regions). They go through the resource event outbox: recorded in the transaction of
 * the change, published after the commit, relayed if that publish is lost.
 */
@Injectable()
export class SuppressionEvents {
  private readonly logger = new Logger(SuppressionEvents.name);

  constructor(
    private readonly outbox: ResourceEventOutbox,
    private readonly repository: SuppressionsRepository,
  ) {}

  /**
   * Runs `change` in a transaction that also records the events of the entries it announces,
   * and publishes them after the commit. A failure to record rolls the change back. Publishing
   * never throws: the change stands, and a lost publish is left to the outbox's relay.
   */
  async change<T>(scope: SuppressionScope, change: (tx: Transaction) => Promise<SuppressionChange<T>>): Promise<T> {
    const { result, publish } = await this.repository.transaction((tx) => this.changeWithin(tx, scope, change));
    await publish();
    return result;
  }

  /**
   * The same in a transaction of the caller's (a worker recording a hard bounce with the
   * suppression it causes): the events are recorded in `tx`; `publish` is for after its commit.
   */
  async changeWithin<T>(
    tx: Transaction,
    scope: SuppressionScope,
    change: (tx: Transaction) => Promise<SuppressionChange<T>>,
  ): Promise<{ result: T; publish: () => Promise<void> }> {
    const { result, announce } = await change(tx);
    const { region, events } = await this.record(tx, scope, announce);
    return { result, publish: async () => void (region && (await this.outbox.publish(region, events))) };
  }

  private async record(tx: Transaction, scope: SuppressionScope, entries: Suppression[]): Promise<{ region: string | null; events: HeraldEvent[] }> {
    if (!entries.length) return { region: null, events: [] };
    const region = scope.homeRegion ?? (await this.repository.teamHomeRegion(scope.teamId, tx));
    if (!region) {
      this.logger.error(`team ${scope.teamId} has no home region: its ${scope.type} events are not recorded`);
      return { region: null, events: [] };
    }
    const events = entries.map((entry) => suppressionEvent(scope.type, entry));
    await this.outbox.record(tx, region, events);
    return { region, events };
  }
}
