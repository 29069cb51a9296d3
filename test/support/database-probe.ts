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

  /** Clears a team's override; only safe before the team's key is first used (keys are cached). */
  close(): Promise<void> {
    return this.client.end();
  }
}
