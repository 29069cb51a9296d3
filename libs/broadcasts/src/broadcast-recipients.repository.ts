import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, type PageRequest, type Transaction } from '@herald/database';

/**
 * broadcast_recipients as the recipients list reads it: who each email went to, and who
 * unsubscribed through the broadcast. Every method takes the team first.
 */
@Injectable()
export class BroadcastRecipientsRepository {
  constructor(private readonly db: DataSource) {}

  /** The contact each of these emails of the broadcast went to. */
  async contactsOf(teamId: string, broadcastId: string, emailIds: string[]): Promise<Map<string, string>> {
    if (!emailIds.length) return new Map();
    const rows: { email_id: string; contact_id: string }[] = await this.db.query(
      `SELECT email_id, contact_id FROM broadcast_recipients WHERE team_id = $1 AND broadcast_id = $2 AND email_id = ANY($3::uuid[])`,
      [teamId, broadcastId, emailIds],
    );
    return new Map(rows.map((r) => [r.email_id, r.contact_id]));
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
    const rows: { email_id: string; contact_id: string }[] = await this.db.query(
      `SELECT email_id, contact_id FROM broadcast_recipients
        WHERE team_id = $1 AND broadcast_id = $2 AND unsubscribed_at IS NOT NULL ${after}
        ORDER BY email_id ${page.before ? 'ASC' : 'DESC'} LIMIT $3`,
      params,
    );
    const kept = rows.slice(0, page.limit);
    if (page.before) kept.reverse();
    return { items: kept.map((r) => ({ emailId: r.email_id, contactId: r.contact_id })), hasMore: rows.length > page.limit };
  }

  /** The contact unsubscribed through this broadcast's email (the first time counts); in `tx` when given. */
  async markUnsubscribed(broadcastId: string, contactId: string, tx?: Transaction): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE broadcast_recipients SET unsubscribed_at = now() WHERE broadcast_id = $1 AND contact_id = $2 AND unsubscribed_at IS NULL`,
      [broadcastId, contactId],
    );
  }
}
