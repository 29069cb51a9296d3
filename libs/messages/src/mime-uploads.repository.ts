import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { affectedRows, EmailPlanes } from '@herald/database';

/**
 * A large SMTP message's body, stored as its DATA arrives (email_mime_uploads, unlogged): chunks
 * in order, numbered from 0. The insert that commits the email joins them into its email_mime row
 * and deletes them (email-insert.ts); a message that is not accepted is discarded, and what a
 * crashed process left behind is swept by age. An upload id is drawn by the relay, which owns it
 * until the email commits: there is no team to scope these rows to yet. They are stored in the
 * relay's region's email plane; an email stored in another region's reads them into its message
 * (EmailRepository.insert).
 */
@Injectable()
export class MimeUploadsRepository {
  constructor(private readonly planes: EmailPlanes) {}

  private get db(): DataSource {
    return this.planes.home;
  }

  /** Stores chunk `seq` of the upload (node-postgres sends the Buffer as binary, unescaped). */
  async append(uploadId: string, seq: number, data: Buffer): Promise<void> {
    await this.db.query(`INSERT INTO email_mime_uploads (upload_id, seq, data) VALUES ($1, $2, $3)`, [uploadId, seq, data]);
  }

  async discard(uploadId: string): Promise<void> {
    await this.db.query(`DELETE FROM email_mime_uploads WHERE upload_id = $1`, [uploadId]);
  }

  /** Deletes chunks stored more than `seconds` ago (longer than any session lasts); answers how many. */
  async sweep(seconds: number): Promise<number> {
    const result: unknown = await this.db.query(`DELETE FROM email_mime_uploads WHERE created_at < now() - make_interval(secs => $1)`, [seconds]);
    return affectedRows(result);
  }
}
