export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export interface StoredImage {
  id: string;
  teamId: string;
  contentType: ImageType;
  byteSize: number;
  sha256: string;
  createdAt: Date;
}

export interface ImageFile {
  contentType: ImageType;
  sha256: string;
  content: Buffer;
}
