import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EmailPlanes, managerOf, NamedStatement, type PageRequest, type Transaction } from '@herald/database';

/** A broadcast's ledger row of one email: the contact it went to. */
export interface LedgerEntry {
  emailId: string;
  teamId: string;
  broadcastId: string;
  contactId: string;
}

/** An unsubscribe's two statements of the ledger, prepared: each runs once per click at a broadcast's peak. */
const LEDGER_OF_EMAIL = NamedStatement.of(
  'broadcast_ledger_of_email',
  `SELECT team_id, broadcast_id, contact_id FROM broadcast_recipients WHERE email_id = $1`,
);
const MARK_UNSUBSCRIBED = NamedStatement.of(
  'broadcast_ledger_mark_unsubscribed',
  `UPDATE broadcast_recipients SET unsubscribed_at = now() WHERE broadcast_id = $1 AND contact_id = $2 AND unsubscribed_at IS NULL`,
);

/**
 * broadcast_recipients, a broadcast's ledger: one row per contact the fan-out wrote an email for
 * (in the transaction of the email, whose writing the row's key decides), who each email went to,
 * and who unsubscribed through the broadcast. The email plane's table (libs/database planes.ts):
 * no statement here names the broadcast or its team's tables, which stay in the control plane.
 * Every method of a team's ledger takes the team first; an unsubscribe token names an email alone.
 * A broadcast's rows are in its emails' region's email plane (EmailPlanes): found by an email's id,
 * by the region, or by asking each region's.
 */
@Injectable()
export class BroadcastRecipientsRepository {
  constructor(private readonly planes: EmailPlanes) {}

  /**
   * In the chunk's email transaction, before its emails: the contact each email goes to, for the
   * contacts not in the ledger yet. Answers the ids of the emails recorded, the only ones to write:
   * a contact already there got its email from an attempt that died before moving the cursor, or
   * from one racing this one (whose row this waits for, then leaves).
   */
  async insert(
    teamId: string,
    broadcastId: string,
    recipients: readonly { contactId: string; emailId: string }[],
    tx?: Transaction,
  ): Promise<Set<string>> {
    if (!recipients.length) return new Set();
    const rows: { email_id: string }[] = await managerOf(this.planes.home, tx).query(
      `INSERT INTO broadcast_recipients (broadcast_id, contact_id, email_id, team_id)
       SELECT $1, c, e, $2 FROM unnest($3::uuid[], $4::uuid[]) AS x(c, e)
       ON CONFLICT (broadcast_id, contact_id) DO NOTHING
       RETURNING email_id`,
      [broadcastId, teamId, recipients.map((r) => r.contactId), recipients.map((r) => r.emailId)],
    );
    return new Set(rows.map((r) => r.email_id));
  }

  /** The contacts with a ledger row after `after` (null: from the start) up to `upTo`, a chunk's range in contact id order, in the broadcast's region. */
  async contactsBetween(region: string, teamId: string, broadcastId: string, after: string | null, upTo: string): Promise<Set<string>> {
    const rows: { contact_id: string }[] = await (
      await this.planes.of(region)
    ).query(
      `SELECT contact_id FROM broadcast_recipients
        WHERE broadcast_id = $2 AND ($3::uuid IS NULL OR contact_id > $3::uuid) AND contact_id <= $4::uuid AND team_id = $1`,
      [teamId, broadcastId, after, upTo],
    );
    return new Set(rows.map((r) => r.contact_id));
  }

  /** The broadcast and contact an email was sent to (an unsubscribe token's), or null. */
  async ofEmail(emailId: string): Promise<LedgerEntry | null> {
    const { rows } = await LEDGER_OF_EMAIL.run<{ team_id: string; broadcast_id: string; contact_id: string }>(await this.planes.ofId(emailId), [
      emailId,
    ]);
    const row = rows[0];
    return row ? { emailId, teamId: row.team_id, broadcastId: row.broadcast_id, contactId: row.contact_id } : null;
  }

  /** The contact each of these emails of the broadcast went to. */
  async contactsOf(teamId: string, broadcastId: string, emailIds: string[]): Promise<Map<string, string>> {
    const contacts = new Map<string, string>();
    for (const group of await this.planes.byId(emailIds)) {
      const rows: { email_id: string; contact_id: string }[] = await group.db.query(
        `SELECT email_id, contact_id FROM broadcast_recipients WHERE team_id = $1 AND broadcast_id = $2 AND email_id = ANY($3::uuid[])`,
        [teamId, broadcastId, group.ids],
      );
      for (const r of rows) contacts.set(r.email_id, r.contact_id);
    }
    return contacts;
  }

  /** The recipients who unsubscribed through the broadcast, by email id (newest email first); only `among` these emails when given. */
  async unsubscribed(
    teamId: string,
    broadcastId: string,
    page: PageRequest,
    among: string[] | null,
  ): Promise<{ items: { emailId: string; contactId: string }[]; hasMore: boolean }> {
    const params: unknown[] = [teamId, broadcastId, page.limit + 1];
    const cursor = page.after ?? page.before;
    let after = cursor ? `AND email_id ${page.before ? '>' : '<'} $${params.push(cursor)}` : '';
    if (among) after += ` AND email_id = ANY($${params.push(among)}::uuid[])`;
    const rows: { email_id: string; contact_id: string }[] = await (
      await this.holding(teamId, broadcastId)
    ).query(
      `SELECT email_id, contact_id FROM broadcast_recipients
        WHERE team_id = $1 AND broadcast_id = $2 AND unsubscribed_at IS NOT NULL ${after}
        ORDER BY email_id ${page.before ? 'ASC' : 'DESC'} LIMIT $3`,
      params,
    );
    const kept = rows.slice(0, page.limit);
    if (page.before) kept.reverse();
    return { items: kept.map((r) => ({ emailId: r.email_id, contactId: r.contact_id })), hasMore: rows.length > page.limit };
  }

  /** The contact unsubscribed through the broadcast of this ledger row (the first time counts). */
  async markUnsubscribed(entry: LedgerEntry): Promise<void> {
    await MARK_UNSUBSCRIBED.run(await this.planes.ofId(entry.emailId), [entry.broadcastId, entry.contactId]);
  }

  /** The email plane holding the broadcast's ledger: its emails' region's. */
  private holding(teamId: string, broadcastId: string): Promise<DataSource> {
    return this.planes.holding(async (db) => {
      const found: unknown[] = await db.query(`SELECT 1 FROM broadcast_recipients WHERE broadcast_id = $1 AND team_id = $2 LIMIT 1`, [
        broadcastId,
        teamId,
      ]);
      return found.length > 0;
    });
  }
}
