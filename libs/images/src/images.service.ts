import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUuid, newId } from '@herald/core';
import { parseImageUpload } from './image-input.validation';
import type { ImageFile, StoredImage } from './image.types';
import { ImagesRepository } from './images.repository';

/** Images for broadcasts: uploaded by a team in the editor, served to anyone who has the URL. */
@Injectable()
export class ImagesService {
  constructor(private readonly images: ImagesRepository) {}

  async upload(teamId: string, body: unknown): Promise<StoredImage> {
    const { contentType, content } = parseImageUpload(body);
    const sha256 = createHash('sha256').update(content).digest('hex');
    return this.images.insert(teamId, newId(), contentType, sha256, content);
  }

  /** The image's bytes, or null for an id that names none (or is not an id). */
  file(id: string): Promise<ImageFile | null> {
    return isUuid(id) ? this.images.file(id) : Promise.resolve(null);
  }
}
