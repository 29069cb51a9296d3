import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { affectedRows, keysetPage, NamedStatement, type PageRequest } from '@herald/database';
import type { Broadcast, BroadcastContent, BroadcastStatus, FanOutCounts } from './broadcast.types';

interface BroadcastRow {
  id: string;
  team_id: string;
  name: string | null;
  segment_id: string | null;
  topic_id: string | null;
  from_address: string;
  subject: string;
  reply_to: string[] | null;
  preview_text: string | null;
  html?: string | null;
  text_body?: string | null;
  document?: unknown;
  status: BroadcastStatus;
  scheduled_at: Date | null;
  sent_at: Date | null;
  created_at: Date;
  recipients: number;
  skipped_unsubscribed: number;
  skipped_topic: number;
  skipped_suppressed: number;
}

/** Where a fan-out stands: the broadcast as it is sent, and the last contact it wrote an email for. */
export interface FanOutState {
  broadcast: Broadcast;
  cursor: string | null;
}

/** Who an unsubscribe token stands for: one email of a broadcast, hence one contact. */
export interface UnsubscribeTarget extends UnsubscribeContext {
  /** The email the token names. */
  emailId: string;
  teamId: string;
  broadcastId: string;
  contactId: string;
}

/** The control plane's part of an unsubscribe target: the team and the broadcast's topic. */
export interface UnsubscribeContext {
  teamName: string;
  /** The team's home region, whose events stream takes its contact events. */
  homeRegion: string;
  topic: { id: string; name: string } | null;
}

/** Raised when another process moved the cursor first: this one stops, and the ledger kept its chunk from being written twice. */
export class FanOutCursorMoved extends Error {
  constructor(readonly broadcastId: string) {
    super(`The fan-out of broadcast ${broadcastId} moved on in another process.`);
  }
}

const SUMMARY = `id, team_id, name, segment_id, topic_id, from_address, subject, reply_to, preview_text, status, scheduled_at,
  sent_at, created_at, recipients, skipped_unsubscribed, skipped_topic, skipped_suppressed`;
const FULL = `${SUMMARY}, html, text_body, document`;
const EDITABLE = new Set<BroadcastStatus>(['draft']);

/** What an unsubscribe needs of the broadcast (unsubscribeContext): prepared, as it runs once per click at a broadcast's peak. */
const UNSUBSCRIBE_CONTEXT = NamedStatement.of(
  'broadcast_unsubscribe_context',
  `SELECT t.name AS team_name, t.home_region, p.id AS topic_id, p.name AS topic_name
     FROM broadcasts b JOIN teams t ON t.id = b.team_id
     LEFT JOIN topics p ON p.id = b.topic_id AND p.team_id = b.team_id
    WHERE b.team_id = $1 AND b.id = $2`,
);

/** Broadcasts and the fan-out's progress. Every method of a team's broadcast takes the team first. */
@Injectable()
export class BroadcastsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(teamId: string, id: string, c: BroadcastContent, status: BroadcastStatus, scheduledAt: Date | null): Promise<void> {
    await this.db.query(
      `INSERT INTO broadcasts (id, team_id, name, segment_id, topic_id, from_address, subject, reply_to, preview_text, html, text_body,
         document, status, scheduled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [id, teamId, ...contentParams(c), status, scheduledAt],
    );
  }

  async get(teamId: string, id: string): Promise<Broadcast | null> {
    const rows: BroadcastRow[] = await this.db.query(`SELECT ${FULL} FROM broadcasts WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows.length ? toBroadcast(rows[0]!) : null;
  }

  async list(teamId: string, page: PageRequest): Promise<{ items: Broadcast[]; hasMore: boolean }> {
    const { rows, hasMore } = await keysetPage<BroadcastRow>(this.db, { table: 'broadcasts', columns: SUMMARY, teamId }, page);
    return { items: rows.map(toBroadcast), hasMore };
  }

  /** Replaces a draft's content; false when it is not a draft (any more). */
  async updateDraft(teamId: string, id: string, c: BroadcastContent): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE broadcasts SET name = $3, segment_id = $4, topic_id = $5, from_address = $6, subject = $7, reply_to = $8,
         preview_text = $9, html = $10, text_body = $11, document = $12, updated_at = now()
       WHERE team_id = $1 AND id = $2 AND status = 'draft'`,
      [teamId, id, ...contentParams(c)],
    );
    return affectedRows(result) === 1;
  }

  /**
   * A draft to send: `queued` now, or `scheduled` for later; `html` and `text` are what will be
   * sent (a document's rendering). False when it is not a draft.
   */
  async schedule(teamId: string, id: string, scheduledAt: Date | null, bodies: { html: string | null; text: string | null }): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE broadcasts SET status = $3, scheduled_at = $4, html = $5, text_body = $6, updated_at = now()
       WHERE team_id = $1 AND id = $2 AND status = 'draft'`,
      [teamId, id, scheduledAt ? 'scheduled' : 'queued', scheduledAt, bodies.html, bodies.text],
    );
    return affectedRows(result) === 1;
  }

  /** A scheduled broadcast whose fan-out has not begun becomes `cancelled`; false otherwise. */
  async cancel(teamId: string, id: string): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE broadcasts SET status = 'cancelled', lease_until = NULL, updated_at = now()
       WHERE team_id = $1 AND id = $2 AND status = 'scheduled'`,
      [teamId, id],
    );
    return affectedRows(result) === 1;
  }

  /** Deletes a draft or a cancelled broadcast; false otherwise. */
  async remove(teamId: string, id: string): Promise<boolean> {
    const result = await this.db.query(`DELETE FROM broadcasts WHERE team_id = $1 AND id = $2 AND status IN ('draft', 'cancelled')`, [teamId, id]);
    return affectedRows(result) === 1;
  }

  /**
   * Takes up to `limit` broadcasts due for fan-out (queued, scheduled and due, or being sent by a
   * process whose lease ran out) for `leaseSeconds`, and marks them `sending`. SKIP LOCKED: any
   * number of processes can ask at once, each gets others.
   */
  async claimDue(limit: number, leaseSeconds: number): Promise<FanOutState[]> {
    // An UPDATE answers TypeORM's [rows, affected] pair.
    const [rows]: [(BroadcastRow & { cursor: string | null })[], number] = await this.db.query(
      `UPDATE broadcasts b SET status = 'sending', lease_until = now() + make_interval(secs => $2), updated_at = now()
       FROM (SELECT id FROM broadcasts
              WHERE status IN ('queued', 'scheduled', 'sending') AND coalesce(scheduled_at, created_at) <= now()
                AND (lease_until IS NULL OR lease_until < now())
              ORDER BY coalesce(scheduled_at, created_at) LIMIT $1 FOR UPDATE SKIP LOCKED) due
       WHERE b.id = due.id
       RETURNING b.*`,
      [limit, leaseSeconds],
    );
    return rows.map((row) => ({ broadcast: toBroadcast(row), cursor: row.cursor }));
  }

  /**
   * Once a chunk's emails committed (in the email plane, whose transaction never names this
   * table): moves the cursor from where this process found it to the chunk's last contact, adds
   * the chunk's counts and extends the lease, in one statement. Throws FanOutCursorMoved when the
   * cursor is no longer where it was: another process took the broadcast over and moved it past
   * the chunk (with its counts). Dying before this leaves the cursor behind the chunk, which is
   * then written again: its ledger rows stop a second email, and its counts are the ledger's
   * (chunkCounts), so they come out the same.
   */
  async advance(id: string, from: string | null, to: string, counts: FanOutCounts, leaseSeconds: number): Promise<void> {
    const result = await this.db.query(
      `UPDATE broadcasts SET cursor = $3, recipients = recipients + $4, skipped_unsubscribed = skipped_unsubscribed + $5,
         skipped_topic = skipped_topic + $6, skipped_suppressed = skipped_suppressed + $7,
         lease_until = now() + make_interval(secs => $8), updated_at = now()
       WHERE id = $1 AND status = 'sending' AND cursor IS NOT DISTINCT FROM $2`,
      [id, from, to, counts.recipients, counts.skippedUnsubscribed, counts.skippedTopic, counts.skippedSuppressed, leaseSeconds],
    );
    if (affectedRows(result) !== 1) throw new FanOutCursorMoved(id);
  }

  /** The fan-out reached the segment's end: `sent`, if this process still holds it at `cursor`. */
  async finish(id: string, cursor: string | null): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE broadcasts SET status = 'sent', sent_at = now(), lease_until = NULL, updated_at = now()
       WHERE id = $1 AND status = 'sending' AND cursor IS NOT DISTINCT FROM $2`,
      [id, cursor],
    );
    return affectedRows(result) === 1;
  }

  /** Holds the broadcast (still `sending`) until `seconds` from now: its team's quota is spent until then. */
  async pause(id: string, seconds: number): Promise<void> {
    await this.db.query(
      `UPDATE broadcasts SET lease_until = now() + make_interval(secs => $2), updated_at = now() WHERE id = $1 AND status = 'sending'`,
      [id, seconds],
    );
  }

  /** Lets another process take the broadcast at once (this one is shutting down). */
  async release(id: string): Promise<void> {
    await this.db.query(`UPDATE broadcasts SET lease_until = NULL WHERE id = $1 AND status = 'sending'`, [id]);
  }

  /**
   * What an unsubscribe token's page needs of the broadcast beside its ledger row
   * (BroadcastRecipientsRepository.ofEmail): the team's name and home region, and the broadcast's
   * topic (null when it has none or it was deleted since). Null when the broadcast is gone.
   */
  async unsubscribeContext(teamId: string, broadcastId: string): Promise<UnsubscribeContext | null> {
    const { rows } = await UNSUBSCRIBE_CONTEXT.run<{ team_name: string; home_region: string; topic_id: string | null; topic_name: string | null }>(
      this.db,
      [teamId, broadcastId],
    );
    const row = rows[0];
    if (!row) return null;
    const topic = row.topic_id ? { id: row.topic_id, name: row.topic_name! } : null;
    return { teamName: row.team_name, homeRegion: row.home_region, topic };
  }
}

function contentParams(c: BroadcastContent): unknown[] {
  return [
    c.name,
    c.segmentId,
    c.topicId,
    c.from,
    c.subject,
    c.replyTo,
    c.previewText,
    c.html,
    c.text,
    c.document === null || c.document === undefined ? null : JSON.stringify(c.document),
  ];
}

function toBroadcast(row: BroadcastRow): Broadcast {
  return {
    id: row.id,
    teamId: row.team_id,
    name: row.name,
    segmentId: row.segment_id,
    topicId: row.topic_id,
    from: row.from_address,
    subject: row.subject,
    replyTo: row.reply_to,
    previewText: row.preview_text,
    html: row.html ?? null,
    text: row.text_body ?? null,
    document: row.document ?? null,
    status: row.status,
    scheduledAt: row.scheduled_at,
    sentAt: row.sent_at,
    createdAt: row.created_at,
    counts: {
      recipients: row.recipients,
      skippedUnsubscribed: row.skipped_unsubscribed,
      skippedTopic: row.skipped_topic,
      skippedSuppressed: row.skipped_suppressed,
    },
  };
}

export const isEditable = (status: BroadcastStatus): boolean => EDITABLE.has(status);
