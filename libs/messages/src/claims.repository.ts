import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '@herald/core';
import { EmailPlanes, NamedStatement } from '@herald/database';
import type {
  ClaimedAttachment,
  ClaimedEmail,
  ClaimedRecipient,
  EmailOutcome,
  LateStatus,
  RecordedAlongside,
  ReportedEmail,
} from './delivery-state.types';
import { lastEventOf, type EmailEventRecord } from './email-events';
import { latestEvents } from './latest-events';
import { EmailEventsRepository } from './email-events.repository';
import { toClaimedEmail, toFacts, type ClaimRow, type EmailRow } from './email.row';
import { fillTemplateBodies } from './template-bodies';
import { readStoredMimes } from './stored-mime';

/** The delivery path's statements, prepared once per connection (NamedStatement). */
const SUPPRESSED_RECIPIENTS = NamedStatement.of(
  'suppressed_recipients',
  `SELECT u.email_id, u.position, s.origin
       FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[]) AS u(email_id, position, team_id, address)
       JOIN suppressions s ON s.team_id = u.team_id AND s.email = lower(u.address)`,
);
const CLAIM_RECIPIENTS = NamedStatement.of(
  'claim_recipients',
  `UPDATE email_recipients r
            SET status = 'sending', attempts = r.attempts + 1, claim_token = $3,
                claimed_until = now() + make_interval(secs => $2), updated_at = now()
           FROM emails e
          WHERE r.email_id = ANY($1::uuid[]) AND e.id = r.email_id AND e.last_event <> 'canceled'
            AND ((r.status IN ('queued', 'deferred') AND (r.next_attempt_at IS NULL OR r.next_attempt_at <= now()))
                 OR (r.status = 'sending' AND r.claimed_until <= now()))
        RETURNING r.email_id, r.position, r.kind, r.address, r.attempts`,
);
const CLAIM_EMAILS = NamedStatement.of(
  'claim_emails',
  `UPDATE emails e
            SET dispatch_count = e.dispatch_count + 1, dispatch_at = now() + make_interval(secs => $2),
                last_event = CASE WHEN old.before IN ('queued', 'scheduled') THEN 'sent' ELSE e.last_event END,
                last_event_at = CASE WHEN old.before IN ('queued', 'scheduled') THEN now() ELSE e.last_event_at END
           FROM (SELECT id, last_event AS before FROM emails WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE) old
          WHERE e.id = old.id
        RETURNING e.id, e.team_id, e.region, e.from_address, e.to_addresses, e.cc_addresses, e.reply_to, e.subject,
                  e.html, e.text_body, e.template_id, e.template_values, e.headers, e.tags, e.message_id, e.created_at,
                  greatest(e.created_at, coalesce(e.scheduled_at, e.created_at)) AS due_at, e.dispatch_count, old.before`,
);
const CLAIMED_ATTACHMENTS = NamedStatement.of(
  'claimed_attachments',
  `SELECT email_id, filename, content_type, content_id, path, content FROM email_attachments
          WHERE email_id = ANY($1::uuid[]) ORDER BY email_id, position`,
);
const RENEW_CLAIMS = NamedStatement.of(
  'renew_claims',
  `WITH renewed AS (
         UPDATE email_recipients SET claimed_until = now() + make_interval(secs => $2)
          WHERE claim_token = ANY($1::uuid[]) AND status = 'sending'
         RETURNING email_id, claim_token
       ), leased AS (
         UPDATE emails SET dispatch_at = now() + make_interval(secs => $2)
          WHERE id IN (SELECT email_id FROM renewed) AND dispatch_at IS NOT NULL
       )
       SELECT DISTINCT email_id, claim_token FROM renewed`,
);
const POSTPONE = NamedStatement.of(
  'postpone_emails',
  `UPDATE emails e SET dispatch_at = now() + make_interval(secs => u.delay_ms / 1000.0), dispatch_called = u.called
         FROM (SELECT id FROM emails WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE) locked,
              unnest($1::uuid[], $2::int[], $3::boolean[]) AS u(id, delay_ms, called)
        WHERE e.id = locked.id AND u.id = e.id AND e.last_event <> 'canceled'
          AND EXISTS (SELECT 1 FROM email_recipients r WHERE r.email_id = e.id AND r.status IN ('queued', 'deferred', 'sending'))`,
);
const RECORD_RECIPIENTS = NamedStatement.of(
  'record_recipients',
  `UPDATE email_recipients r
            SET status = u.status, last_response = u.response, mx = u.mx, next_attempt_at = u.next_attempt_at,
                claimed_until = NULL, claim_token = NULL, updated_at = now()
           FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
                AS u(email_id, position, token, status, response, mx, next_attempt_at)
          WHERE r.email_id = u.email_id AND r.position = u.position AND r.claim_token = u.token
        RETURNING r.email_id`,
);
const SETTLE_EMAILS = NamedStatement.of(
  'settle_emails',
  `UPDATE emails e
          SET dispatch_at = p.pending_at,
              last_event = CASE WHEN u.last_event IS NOT NULL AND (e.last_event_at IS NULL OR e.last_event_at <= u.at) THEN u.last_event ELSE e.last_event END,
              last_event_at = CASE WHEN u.last_event IS NOT NULL AND (e.last_event_at IS NULL OR e.last_event_at <= u.at) THEN u.at ELSE e.last_event_at END
         FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS u(id, last_event, at)
         LEFT JOIN LATERAL (
           SELECT min(CASE r.status WHEN 'deferred' THEN r.next_attempt_at WHEN 'sending' THEN r.claimed_until ELSE now() END) AS pending_at
             FROM email_recipients r WHERE r.email_id = u.id AND r.status IN ('queued', 'deferred', 'sending')
         ) p ON true
        WHERE e.id = u.id`,
);

interface ClaimedRecipientRow {
  email_id: string;
  position: number;
  kind: 'to' | 'cc' | 'bcc';
  address: string;
  attempts: number;
}

/**
 * Which claimed recipients their team has suppressed, and why, by `email_id position`. A
 * statement of its own, on suppressions alone: they are the control plane, which will not share
 * a database with the email plane (issue 15); one statement per claim, however many emails.
 */
async function suppressedRecipients(
  m: EntityManager | DataSource,
  rows: ClaimedRecipientRow[],
  teams: Map<string, string>,
): Promise<Map<string, NonNullable<ClaimedRecipient['suppressedBy']>>> {
  const asked = rows.filter((r) => teams.has(r.email_id));
  if (!asked.length) return new Map();
  const { rows: found } = await SUPPRESSED_RECIPIENTS.run<{
    email_id: string;
    position: number;
    origin: NonNullable<ClaimedRecipient['suppressedBy']>;
  }>(m, [asked.map((r) => r.email_id), asked.map((r) => r.position), asked.map((r) => teams.get(r.email_id)), asked.map((r) => r.address)]);
  return new Map(found.map((f) => [`${f.email_id} ${f.position}`, f.origin]));
}

interface AttachmentRow extends Omit<ClaimedAttachment, 'contentType' | 'contentId'> {
  email_id: string;
  content_type: string | null;
  content_id: string | null;
}

/**
 * The delivery engine's state in Postgres. A claim takes the recipients that are due (queued,
 * deferred past their time, or held by a worker whose claim ran out) and turns the email's
 * dispatch into a lease: if this worker dies, the reconciler dispatches the email again when the
 * claim runs out. Recording an outcome is fenced by the claim's token, so a worker that lost its
 * claim cannot overwrite the one that took over. Both work on many emails per statement.
 */
@Injectable()
export class ClaimsRepository {
  constructor(
    private readonly planes: EmailPlanes,
    /** The control plane, for the suppressions. */
    private readonly control: DataSource,
    private readonly events: EmailEventsRepository,
  ) {}

  /** The worker's region's email plane: the emails it is sent. */
  private get db(): DataSource {
    return this.planes.home;
  }

  /** Claims the due recipients of these emails; `onClaim` gives the events to record with the claim. */
  async claim(
    emailIds: string[],
    claimSeconds: number,
    onClaim: (emails: ClaimedEmail[]) => EmailEventRecord[],
  ): Promise<{ claimed: Map<string, ClaimedEmail>; events: EmailEventRecord[] }> {
    const token = newId();
    return this.db.transaction(async (m) => {
      const { rows } = await CLAIM_RECIPIENTS.run<ClaimedRecipientRow>(m, [emailIds, claimSeconds, token]);
      if (!rows.length) return { claimed: new Map<string, ClaimedEmail>(), events: [] };
      const claimedIds = [...new Set(rows.map((r) => r.email_id))];
      const { rows: emails } = await CLAIM_EMAILS.run<ClaimRow>(m, [claimedIds, claimSeconds]);
      const { rows: attachments } = await CLAIMED_ATTACHMENTS.run<AttachmentRow>(m, [claimedIds]);
      const mimes = await readStoredMimes(m, claimedIds);
      await fillTemplateBodies(m, emails);
      // One database for both planes: the claim's own connection, so that a claim never waits on its pool for a second one.
      const suppressions = this.control === this.db ? m : this.control;
      const suppressed = await suppressedRecipients(suppressions, rows, new Map(emails.map((e) => [e.id, e.team_id])));
      const claimed = new Map(emails.map((row) => [row.id, toClaimedEmail(row, token)]));
      for (const [emailId, mime] of mimes) {
        const email = claimed.get(emailId);
        if (email) email.mime = mime;
      }
      for (const r of rows) {
        claimed.get(r.email_id)?.recipients.push({
          position: r.position,
          kind: r.kind,
          address: r.address,
          attempts: r.attempts,
          suppressedBy: suppressed.get(`${r.email_id} ${r.position}`) ?? null,
        });
      }
      for (const a of attachments) {
        claimed.get(a.email_id)?.attachments.push({
          filename: a.filename,
          contentType: a.content_type,
          contentId: a.content_id,
          path: a.path,
          content: a.content,
        });
      }
      return { claimed, events: await this.events.insert(m, onClaim([...claimed.values()])) };
    });
  }

  /**
   * Extends live claims (and their emails' leases) and returns the emails each token still holds.
   * A claim whose outcome is recorded is gone already; one that ran out and was taken over holds
   * nothing any more, and is not extended.
   */
  async renewClaims(tokens: string[], claimSeconds: number): Promise<{ emailId: string; token: string }[]> {
    if (!tokens.length) return [];
    const { rows } = await RENEW_CLAIMS.run<{ email_id: string; claim_token: string }>(this.db, [tokens, claimSeconds]);
    return rows.map((r) => ({ emailId: r.email_id, token: r.claim_token }));
  }

  /**
   * Sets the leases of unclaimed emails (emails.dispatch_at) `delayMs` ahead, so the reconciler
   * dispatches them again then, its command saying whether the email was `called` back; only
   * emails with a recipient still to send and not canceled. Rows are locked in id order, as the
   * claim locks them.
   */
  async postpone(items: { emailId: string; delayMs: number; called: boolean }[]): Promise<void> {
    if (!items.length) return;
    await POSTPONE.run(this.db, [items.map((i) => i.emailId), items.map((i) => Math.round(i.delayMs)), items.map((i) => i.called)]);
  }

  /**
   * Records outcomes. An outcome whose claim was taken over records nothing. Returns, per
   * outcome, the events that were new (an event recorded before keeps its id and is not
   * published again).
   *
   * `alongside` writes the control plane (a hard bounce's suppression). With one database for
   * both planes it commits in the outcomes' transaction, given only the new events. With two
   * (issue 15) no transaction spans them, so it commits first, in a control-plane transaction
   * of its own, given every outcome's events: a bounce is still never on record without its
   * suppression. A crash between the two leaves the address suppressed and the outcome
   * unrecorded; the email's recipient is then claimed again and recorded as suppressed rather
   * than bounced, and never sent to again. Its writes must be idempotent (a suppression is an
   * upsert).
   */
  async record(outcomes: EmailOutcome[], alongside?: RecordedAlongside): Promise<EmailEventRecord[][]> {
    if (!outcomes.length) return [];
    if (alongside && this.control !== this.db) {
      await this.control.transaction((m) =>
        alongside(
          m,
          outcomes.map((o) => o.events),
        ),
      );
      return this.recordOutcomes(outcomes);
    }
    return this.recordOutcomes(outcomes, alongside);
  }

  private recordOutcomes(outcomes: EmailOutcome[], alongside?: RecordedAlongside): Promise<EmailEventRecord[][]> {
    return this.db.transaction(async (m) => {
      const updates = outcomes.flatMap((o) => o.updates.map((u) => ({ ...u, emailId: o.emailId, token: o.token })));
      const { rows: applied } = await RECORD_RECIPIENTS.run<{ email_id: string }>(m, [
        updates.map((u) => u.emailId),
        updates.map((u) => u.position),
        updates.map((u) => u.token),
        updates.map((u) => u.status),
        updates.map((u) => u.response),
        updates.map((u) => u.mx),
        updates.map((u) => u.nextAttemptAt?.toISOString() ?? null),
      ]);
      const stillOurs = new Set(applied.map((a) => a.email_id));
      const kept = outcomes.filter((o) => stillOurs.has(o.emailId));
      if (!kept.length) return outcomes.map(() => []);
      await this.settleEmails(m, kept);
      const fresh = new Set(
        (
          await this.events.insert(
            m,
            kept.flatMap((o) => o.events),
          )
        ).map((e) => e.id),
      );
      const recorded = outcomes.map((o) => o.events.filter((e) => fresh.has(e.id)));
      await alongside?.(m, recorded);
      return recorded;
    });
  }

  /** Records events about recipients outside a claim (late bounces, complaints); returns the new ones. */
  async recordLate(events: EmailEventRecord[], statuses: LateStatus[]): Promise<EmailEventRecord[]> {
    return this.db.transaction(async (m) => {
      if (statuses.length) {
        await m.query(
          `UPDATE email_recipients r SET status = u.status, updated_at = now()
             FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(email_id, address, status)
            WHERE r.email_id = u.email_id AND lower(r.address) = lower(u.address)`,
          [statuses.map((s) => s.emailId), statuses.map((s) => s.address), statuses.map((s) => s.status)],
        );
      }
      const inserted = await this.events.insert(m, events);
      await this.events.settleLastEvents(m, inserted);
      return inserted;
    });
  }

  /** The email's team, region, recipients and what the events repeat about it; null if unknown. */
  async emailForReport(emailId: string): Promise<ReportedEmail | null> {
    const rows: (EmailRow & { recipients: string[] })[] = await this.db.query(
      `SELECT e.id, e.team_id, e.region, e.from_address, e.subject, e.message_id, e.tags, e.headers, e.created_at,
              array(SELECT r.address FROM email_recipients r WHERE r.email_id = e.id ORDER BY r.position) AS recipients
         FROM emails e WHERE e.id = $1`,
      [emailId],
    );
    const row = rows[0];
    return row ? { ...toFacts(row), recipients: row.recipients } : null;
  }

  /**
   * One update per email after an outcome: its dispatch (done, or a lease until its next due
   * recipient) and its last_event, which follows the latest event (an older event arriving late
   * changes nothing).
   */
  private async settleEmails(m: EntityManager, outcomes: EmailOutcome[]): Promise<void> {
    const latest = latestEvents(outcomes.flatMap((o) => o.events));
    const ids = outcomes.map((o) => o.emailId);
    await SETTLE_EMAILS.run(m, [
      ids,
      ids.map((id) => (latest.get(id) ? lastEventOf(latest.get(id)!.type) : null)),
      ids.map((id) => latest.get(id)?.createdAt.toISOString() ?? null),
    ]);
  }
}
