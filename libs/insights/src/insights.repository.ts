import { Injectable } from '@nestjs/common';
import { EmailPlanes } from '@herald/database';
import type { Insight } from './insight.types';

/** email_insights: each email's content insights, kept once computed, beside the email in its region's email plane. Every method takes the team first. */
@Injectable()
export class InsightsRepository {
  constructor(private readonly planes: EmailPlanes) {}

  async stored(teamId: string, emailId: string): Promise<Insight[] | null> {
    const rows: { content: Insight[] }[] = await (
      await this.planes.ofId(emailId)
    ).query(`SELECT content FROM email_insights WHERE team_id = $1 AND email_id = $2`, [teamId, emailId]);
    return rows[0]?.content ?? null;
  }

  /** Keeps the first insights stored for the email; answers those (another reader's, if it got there first). */
  async keep(teamId: string, emailId: string, insights: Insight[]): Promise<Insight[]> {
    const rows: { content: Insight[] }[] = await (
      await this.planes.ofId(emailId)
    ).query(
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
}
