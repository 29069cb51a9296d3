import { Injectable, Logger } from '@nestjs/common';
import { EventPublisher, type HeraldEvent } from '@herald/bus';
import { isoTimestamp, newId } from '@herald/core';
import { suppressionEventData } from './suppression.presenter';
import type { Suppression } from './suppression.types';
import { SuppressionsRepository } from './suppressions.repository';

export type SuppressionEventType = 'suppression.added' | 'suppression.removed';

/** The event envelope for a suppression fact: the entry as it is now (or was, when removed). */
export function suppressionEvent(type: SuppressionEventType, entry: Suppression, at: Date = new Date()): HeraldEvent {
  return { id: newId(), type, created_at: isoTimestamp(at), team_id: entry.teamId, data: suppressionEventData(entry) };
}

/**
 * Publishes suppression events on the events stream of the team's home region (the list is
 * team-wide, across regions). Called after the change is committed, and never throws: a lost
 * event is logged (there is no outbox), the change stands.
 */
@Injectable()
export class SuppressionEvents {
  private readonly logger = new Logger(SuppressionEvents.name);

  constructor(
    private readonly events: EventPublisher,
    private readonly repository: SuppressionsRepository,
  ) {}

  async publish(type: SuppressionEventType, entries: Suppression[], homeRegion?: string): Promise<void> {
    if (!entries.length) return;
    let region = homeRegion ?? null;
    try {
      region ??= await this.repository.teamHomeRegion(entries[0].teamId);
    } catch (error) {
      this.logger.error(`could not find the home region of team ${entries[0].teamId}: ${String(error)}`);
    }
    if (!region) return;
    for (const entry of entries) {
      const event = suppressionEvent(type, entry);
      try {
        await this.events.publish(region, event);
      } catch (error) {
        this.logger.error(`could not publish ${type} ${event.id} for suppression ${entry.id}: ${String(error)}`);
      }
    }
  }
}
