import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ImageFile, ImageType, StoredImage } from './image.types';

interface ImageRow {
  id: string;
  team_id: string;
  content_type: ImageType;
  byte_size: number;
  sha256: string;
  created_at: Date;
}

const toImage = (row: ImageRow): StoredImage => ({
  id: row.id,
  teamId: row.team_id,
  contentType: row.content_type,
  byteSize: row.byte_size,
  sha256: row.sha256,
  createdAt: row.created_at,
});

/** The editor's uploaded images. Writes take the team first; the public read is by id alone (the id is the capability). */
@Injectable()
export class ImagesRepository {
  constructor(private readonly db: DataSource) {}

  async insert(teamId: string, id: string, contentType: ImageType, sha256: string, content: Buffer): Promise<StoredImage> {
    const rows: ImageRow[] = await this.db.query(
      `INSERT INTO editor_images (id, team_id, content_type, byte_size, sha256, content) VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING id, team_id, content_type, byte_size, sha256, created_at`,
      [id, teamId, contentType, content.length, sha256, content],
    );
    return toImage(rows[0]);
  }

  async file(id: string): Promise<ImageFile | null> {
    const rows: { content_type: ImageType; sha256: string; content: Buffer }[] = await this.db.query(
      `SELECT content_type, sha256, content FROM editor_images WHERE id = $1`,
      [id],
    );
    return rows.length ? { contentType: rows[0].content_type, sha256: rows[0].sha256, content: rows[0].content } : null;
  }
}
