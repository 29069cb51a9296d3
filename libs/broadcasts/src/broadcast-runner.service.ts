import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { newRegionalId, PeriodicJob } from '@herald/core';
import { ContactsDirectory, type SegmentMember } from '@herald/contacts';
import { DomainsRepository } from '@herald/domains';
import type { Reservation } from '@herald/limits';
import { Dispatcher, EmailStore, type NewEmail } from '@herald/messages';
import { MetricsService } from '@herald/observability';
import { SuppressionsRepository } from '@herald/suppressions';
import { fromParts } from './broadcast-input.validation';
import { BroadcastLinks } from './broadcast-links';
import { BroadcastQuota, isQuotaExceeded } from './broadcast-quota';
import { prepareBroadcast, recipientEmail, unsubscribeOf, type PreparedBroadcast } from './broadcast-message';
import { BroadcastRecipientsRepository } from './broadcast-recipients.repository';
import { BROADCASTS_CONFIG, type BroadcastsConfig } from './broadcasts.config';
import type { Broadcast } from './broadcast.types';
import { BroadcastsRepository, FanOutCursorMoved, type FanOutState } from './broadcasts.repository';
import { chunkCounts, type FanOutChunk } from './fan-out-chunk';

const POLL_MS = 1000;
/** Chunks whose send commands are still being published while the next chunks are written. */
const DISPATCHES_IN_FLIGHT = 4;
/** Chunks whose transactions run at once. */
const CHUNKS_WRITTEN_AT_ONCE = 2;

/**
 * The fan-out of broadcasts, run by the api role (BroadcastFanOutModule, as the dispatch
 * reconciler is): every second,
 * and at once when a broadcast is sent now, it takes the broadcasts that are due (queued, or
 * scheduled and due, or left by a process that died) and turns each one's segment into emails,
 * chunk by chunk, through the send path's store and dispatch outbox.
 *
 * A chunk is written in two steps, as its two halves live in different databases (issue 15):
 * first one transaction of the email plane, the broadcast_recipients rows first (one per contact,
 * keyed by broadcast and contact, ON CONFLICT DO NOTHING) and then the emails (with their
 * dispatch-outbox row) of the contacts whose row was new; then, once that committed, the cursor
 * in the control plane, moved past the chunk's last contact from where this process found it
 * (a compare-and-set). Nobody gets the broadcast twice: a contact's email is written only with
 * its new ledger row. Nobody is skipped: the cursor moves only after the chunk's emails
 * committed, and a process killed in between leaves the chunk to be written again from the
 * cursor, which writes the emails its rows were missing and no others. The counts moved with
 * the cursor are read back from the ledger (chunkCounts), so a chunk written again counts what
 * it would have once. Two processes on one broadcast (a lease that ran out under a slow chunk)
 * may both write a chunk: the ledger's key gives each contact's email to one of them, the
 * cursor's compare-and-set lets one go on, and the other stops (FanOutCursorMoved). Emails
 * committed but not yet published are the dispatch outbox's to relay, as for any email.
 *
 * Left out, and counted: unsubscribed contacts, contacts not subscribed to the broadcast's topic,
 * and addresses on the team's suppression list.
 */
@Injectable()
export class BroadcastRunner implements OnModuleDestroy {
  private readonly logger = new Logger(BroadcastRunner.name);
  private readonly job: PeriodicJob;
  private readonly dispatches = new Set<Promise<unknown>>();
  private readonly written;
  private started = false;

  constructor(
    @Inject(BROADCASTS_CONFIG.token) private readonly config: BroadcastsConfig,
    private readonly repository: BroadcastsRepository,
    private readonly ledger: BroadcastRecipientsRepository,
    private readonly contacts: ContactsDirectory,
    private readonly domains: DomainsRepository,
    private readonly suppressions: SuppressionsRepository,
    private readonly emails: EmailStore,
    private readonly dispatcher: Dispatcher,
    private readonly links: BroadcastLinks,
    private readonly quota: BroadcastQuota,
    metrics: MetricsService,
  ) {
    this.job = new PeriodicJob(
      () => this.pass(),
      () => POLL_MS,
      (error) => this.logger.warn(`broadcast fan-out failed: ${error.message}`),
    );
    this.written = metrics.counter('herald_broadcast_emails_total', 'Broadcast emails written by the fan-out');
  }

  /** Started by BroadcastFanOutModule, in the roles that fan out (the api role). */
  start(): void {
    this.started = true;
    this.job.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /** Stops taking broadcasts: the chunk being written commits (or not), the broadcast is released to the others. */
  async stop(): Promise<void> {
    this.started = false;
    await this.job.stop();
    await Promise.allSettled([...this.dispatches]);
  }

  /** A broadcast was sent now: look at once rather than at the next tick. */
  kick(): void {
    if (this.started && !this.job.isStopped)
      void this.job.runOnce().catch((error: Error) => this.logger.warn(`broadcast fan-out failed: ${error.message}`));
  }

  /** One pass: fans out every broadcast due; answers how many emails it wrote. */
  async pass(): Promise<number> {
    let written = 0;
    for (;;) {
      const due = await this.repository.claimDue(1, this.config.BROADCAST_LEASE_SECONDS);
      if (!due.length) return written;
      written += await this.fanOut(due[0]!);
      if (this.job.isStopped) return written;
    }
  }

  /**
   * The chunks in order, two written at once: while one chunk's transaction runs, the next is
   * read, rendered and its own transaction started (Postgres works on both, on two connections).
   * The cursor moves past each chunk in order, once its emails and those of every chunk before
   * it committed. A chunk written beside one that fails, or a process killed with two open, is
   * harmless: the cursor stays before the first chunk not known to be written, and writing that
   * range again writes only the emails the ledger lacks. The chunk after the ones being written
   * is read ahead; if the fan-out stops, it is dropped.
   */
  private async fanOut(state: FanOutState): Promise<number> {
    const { broadcast } = state;
    const prepared = await this.prepare(state);
    const plan = await this.quota.plan(broadcast.teamId);
    let cursor = state.cursor;
    let written = 0;
    /** Chunks being written, oldest first, whose cursor has not moved yet. */
    const writing: { chunk: FanOutChunk; done: Promise<number> }[] = [];
    /** Waits for the oldest chunk being written and moves the cursor past it. */
    const settleOldest = async () => {
      const { chunk, done } = writing[0]!;
      written += await done;
      writing.shift();
      await this.advance(prepared, cursor, chunk);
      cursor = chunk.cursor;
    };
    const settleAll = async () => {
      while (writing.length) await settleOldest();
    };
    let next = this.nextChunk(prepared, cursor);
    try {
      for (;;) {
        const current = await next;
        if (this.job.isStopped) {
          await settleAll();
          await this.repository.release(broadcast.id);
          return written;
        }
        if (!current) {
          await settleAll();
          if (await this.repository.finish(broadcast.id, cursor)) this.logger.log(`broadcast ${broadcast.id} sent`);
          return written;
        }
        const { chunk, rows } = current;
        next = this.nextChunk(prepared, chunk.cursor);
        // Handled now, awaited later: a failure meanwhile is not an unhandled rejection.
        next.catch(() => undefined);
        // The chunk's emails count against the plan's quota, as a batch's do; a spent quota holds the broadcast until it resets.
        let reserved: Reservation | null = null;
        try {
          if (rows.length) reserved = await this.quota.reserve(broadcast.teamId, plan, rows.length);
        } catch (error) {
          if (!isQuotaExceeded(error)) throw error;
          await settleAll();
          await this.repository.pause(broadcast.id, error.retryAfterSeconds ?? 3600);
          this.logger.warn(`broadcast ${broadcast.id} waits for its team's quota: ${error.message}`);
          return written;
        }
        const done = reserved ? this.write(broadcast, chunk, rows, reserved) : Promise.resolve(0);
        done.catch(() => undefined);
        writing.push({ chunk, done });
        if (writing.length >= CHUNKS_WRITTEN_AT_ONCE) await settleOldest();
      }
    } catch (error) {
      await Promise.allSettled([next, ...writing.map((w) => w.done)]);
      if (error instanceof FanOutCursorMoved) {
        this.logger.warn(error.message);
        return written;
      }
      throw error;
    }
  }

  /**
   * The chunk's email-plane transaction: its ledger rows, then the emails of the contacts whose
   * row is new. The quota reserved for the others (whose emails another attempt wrote) is given
   * back, and the emails written are published. Answers how many were written.
   */
  private async write(broadcast: Broadcast, chunk: FanOutChunk, rows: NewEmail[], reserved: Reservation): Promise<number> {
    let fresh: NewEmail[];
    try {
      fresh = await this.emails.insertKept(rows, (tx) => this.ledger.insert(broadcast.teamId, broadcast.id, chunk.recipients, tx));
    } catch (error) {
      await this.quota.release(broadcast.teamId, reserved);
      throw error;
    }
    await this.quota.release(broadcast.teamId, reserved, rows.length - fresh.length);
    this.written.inc(fresh.length);
    await this.dispatch(fresh);
    return fresh.length;
  }

  /** Moves the cursor past the chunk, with the counts of its range as the ledger has them (chunkCounts). */
  private async advance({ broadcast, region }: PreparedBroadcast, from: string | null, chunk: FanOutChunk): Promise<void> {
    const ledgered = await this.ledger.contactsBetween(region, broadcast.teamId, broadcast.id, from, chunk.cursor);
    await this.repository.advance(broadcast.id, from, chunk.cursor, chunkCounts(chunk, ledgered), this.config.BROADCAST_LEASE_SECONDS);
  }

  /** The chunk after `after`: its members read, left out or rendered; null at the segment's end. */
  private async nextChunk(p: PreparedBroadcast, after: string | null): Promise<{ chunk: FanOutChunk; rows: NewEmail[] } | null> {
    const { members } = await this.contacts.segmentMembersPage(p.broadcast.teamId, p.broadcast.segmentId!, {
      afterContactId: after,
      limit: this.config.BROADCAST_CHUNK_SIZE,
      topicId: p.broadcast.topicId,
      // Own values only: a tag's inline fallback comes before the property's (prepare reads those).
      rawProperties: true,
    });
    return members.length ? this.chunkOf(p, members) : null;
  }

  /** Who of these members gets an email, and the email of each. */
  private async chunkOf(p: PreparedBroadcast, members: SegmentMember[]): Promise<{ chunk: FanOutChunk; rows: NewEmail[] }> {
    const skipped: FanOutChunk['skipped'] = { unsubscribed: [], topic: [], suppressed: [] };
    const candidates: SegmentMember[] = [];
    for (const m of members) {
      if (m.unsubscribed) skipped.unsubscribed.push(m.contactId);
      else if (p.broadcast.topicId && m.topicSubscription !== 'opt_in') skipped.topic.push(m.contactId);
      else candidates.push(m);
    }
    const suppressed = new Set(
      await this.suppressions.suppressedAmong(
        p.broadcast.teamId,
        candidates.map((m) => m.email),
      ),
    );
    const dispatchId = newRegionalId(p.region);
    const recipients: FanOutChunk['recipients'] = [];
    const rows: NewEmail[] = [];
    for (const m of candidates) {
      if (suppressed.has(m.email)) {
        skipped.suppressed.push(m.contactId);
        continue;
      }
      const emailId = newRegionalId(p.region);
      recipients.push({ contactId: m.contactId, emailId });
      rows.push(recipientEmail(p, m, emailId, dispatchId, unsubscribeOf(p, emailId, this.links.keys)));
    }
    return { chunk: { recipients, skipped, cursor: members[members.length - 1]!.contactId }, rows };
  }

  /**
   * Publishes a chunk's send commands, as one message (Dispatcher.dispatchChunk), while the next
   * chunk is written, a few chunks at most; what fails to publish is the outbox relay's.
   */
  private async dispatch(rows: NewEmail[]): Promise<void> {
    if (!rows.length) return;
    const work = this.dispatcher.dispatchChunk(rows).finally(() => this.dispatches.delete(work));
    this.dispatches.add(work);
    if (this.dispatches.size >= DISPATCHES_IN_FLIGHT) await Promise.race(this.dispatches);
  }

  /**
   * The sending domain's region and Return-Path domain. A domain no longer verified still gets
   * its emails written: the worker checks the domain again at delivery and fails them, which
   * the broadcast's counts show, as for a scheduled email.
   */
  private async prepare(state: FanOutState): Promise<PreparedBroadcast> {
    const { broadcast } = state;
    const fromDomain = fromParts(broadcast.from).domain;
    const domain = await this.domains.findByName(broadcast.teamId, fromDomain);
    return prepareBroadcast(broadcast, {
      region: domain?.region ?? this.config.HERALD_REGION,
      unsubscribeBase: await this.links.unsubscribeBase(),
      returnPathDomain: domain ? `${domain.customReturnPath}.${domain.name}` : fromDomain,
      fallbacks: await this.contacts.propertyFallbacks(broadcast.teamId),
    });
  }
}
