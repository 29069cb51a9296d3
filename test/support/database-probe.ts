import { Client } from 'pg';
import { HeraldConfig } from '@herald/config';

export interface StoredAttachment {
  position: number;
  filename: string | null;
  content_type: string | null;
  content_id: string | null;
  path: string | null;
  content: Buffer | null;
  size: number;
}

/**
 * A read-mostly window on a suite's isolated schema, for what the API does not return
 * (attachment bytes).
 */
export class DatabaseProbe {
  private constructor(private readonly client: Client) {}

  static async open(config: HeraldConfig): Promise<DatabaseProbe> {
    const client = new Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    await client.query(`SET search_path TO "${config.DATABASE_SCHEMA}"`);
    return new DatabaseProbe(client);
  }

  async attachments(emailId: string): Promise<StoredAttachment[]> {
    const { rows } = await this.client.query<StoredAttachment>(
      `SELECT position, filename, content_type, content_id, path, content, size
       FROM email_attachments WHERE email_id = $1 ORDER BY position`,
      [emailId],
    );
    return rows;
  }

  /** What Herald stored about an email that the API does not return (its region). */
  async email(emailId: string): Promise<{ region: string; from_address: string } | null> {
    const { rows } = await this.client.query<{ region: string; from_address: string }>('SELECT region, from_address FROM emails WHERE id = $1', [
      emailId,
    ]);
    return rows[0] ?? null;
  }

  /** How many emails a team has on record. */
  async emailCount(teamId: string): Promise<number> {
    const { rows } = await this.client.query<{ n: number }>('SELECT count(*)::int AS n FROM emails WHERE team_id = $1', [teamId]);
    return rows[0].n;
  }

  /**
   * Puts a domain in a status as the verifier would (its DNS checks are the domain suites' job):
   * a legitimate fixture for the send path, which only reads the status.
   */
  async setDomainStatus(domainId: string, status: string): Promise<void> {
    const { rowCount } = await this.client.query(
      `UPDATE domains SET status = $2, verified_at = CASE WHEN $2 = 'verified' THEN now() ELSE verified_at END WHERE id = $1`,
      [domainId, status],
    );
    if (rowCount !== 1) throw new Error(`no domain ${domainId}`);
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
