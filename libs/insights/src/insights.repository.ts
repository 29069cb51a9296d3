import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Insight, RecipientHistory } from './insight.types';

/** At most this many earlier troubles are read per email: the finding lists a few. */
const HISTORY_LIMIT = 10;

/**
 * email_insights (each email's content insights, kept once computed) and what the recipient
 * rules read of a team's past: its suppression list and earlier bounces. Every method takes the
 * team first.
 */
@Injectable()
export class InsightsRepository {
  constructor(private readonly db: DataSource) {}

  async stored(teamId: string, emailId: string): Promise<Insight[] | null> {
    const rows: { content: Insight[] }[] = await this.db.query(`SELECT content FROM email_insights WHERE team_id = $1 AND email_id = $2`, [
      teamId,
      emailId,
    ]);
    return rows[0]?.content ?? null;
  }

  /** Keeps the first insights stored for the email; answers those (another reader's, if it got there first). */
  async keep(teamId: string, emailId: string, insights: Insight[]): Promise<Insight[]> {
    const rows: { content: Insight[] }[] = await this.db.query(
      `WITH inserted AS (
         INSERT INTO email_insights (email_id, team_id, content) VALUES ($2, $1, $3::jsonb)
         ON CONFLICT (email_id) DO NOTHING RETURNING content
       )
       SELECT content FROM inserted
       UNION ALL SELECT content FROM email_insights WHERE team_id = $1 AND email_id = $2
       LIMIT 1`,
      [teamId, emailId, JSON.stringify(insights)],
    );
    return rows[0]?.content ?? insights;
  }

  /**
   * The recipients' trouble before `before` (the email's acceptance): suppression-list entries,
   * then bounces of the team's earlier emails to an address not on the list, newest first.
   */
  async history(teamId: string, addresses: string[], before: Date): Promise<RecipientHistory[]> {
    if (!addresses.length) return [];
    const rows: RecipientHistory[] = await this.db.query(
      `(SELECT s.email AS address, 'suppressed' AS kind, s.origin, s.created_at AS at, s.reason AS detail
          FROM suppressions s
         WHERE s.team_id = $1 AND s.email = ANY($2::text[]) AND s.created_at < $3
         ORDER BY s.created_at DESC LIMIT $4)
       UNION ALL
       (SELECT lower(r.address) AS address, 'bounced' AS kind, NULL AS origin, r.updated_at AS at, r.last_response AS detail
          FROM email_recipients r JOIN emails e ON e.id = r.email_id
         WHERE lower(r.address) = ANY($2::text[]) AND e.team_id = $1 AND r.status = 'bounced' AND r.updated_at < $3
           AND lower(r.address) NOT IN (SELECT email FROM suppressions WHERE team_id = $1 AND email = ANY($2::text[]) AND created_at < $3)
         ORDER BY r.updated_at DESC LIMIT $4)`,
      [teamId, addresses, before, HISTORY_LIMIT],
    );
    return rows.slice(0, HISTORY_LIMIT);
  }
}
