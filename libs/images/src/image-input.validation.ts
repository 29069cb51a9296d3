import { HeraldError } from '@herald/core';
import { IMAGE_TYPES, MAX_IMAGE_BYTES, type ImageType } from './image.types';

/** The first bytes of each format: the stored type is what the bytes are, whatever the browser said. */
const SIGNATURES: { type: ImageType; test: (bytes: Buffer) => boolean }[] = [
  { type: 'image/png', test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', test: (b) => ['GIF87a', 'GIF89a'].includes(b.subarray(0, 6).toString('latin1')) },
  { type: 'image/webp', test: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
];

const invalid = (message: string) => new HeraldError('validation_error', message);

/** `{ content_type, content (base64), filename? }` → the image's bytes and their format; 422 naming the field otherwise. */
export function parseImageUpload(body: unknown): { contentType: ImageType; content: Buffer } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('The body must be a JSON object with `content_type` and `content`.');
  const { content_type: declared, content } = body as Record<string, unknown>;
  if (typeof declared !== 'string' || !(IMAGE_TYPES as readonly string[]).includes(declared)) {
    throw invalid(`The \`content_type\` field must be one of ${IMAGE_TYPES.join(', ')}.`);
  }
  if (typeof content !== 'string' || content.length === 0) throw invalid('The `content` field must be the image file, base64-encoded.');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(content.replace(/\s/g, ''))) throw invalid('The `content` field is not valid base64.');
  const bytes = Buffer.from(content, 'base64');
  if (bytes.length > MAX_IMAGE_BYTES)
    throw invalid(`The \`content\` field holds ${bytes.length} bytes; an image may be up to ${MAX_IMAGE_BYTES} bytes (5 MB).`);
  const actual = SIGNATURES.find((signature) => signature.test(bytes))?.type;
  if (!actual) throw invalid('The `content` field is not a PNG, JPEG, GIF or WebP image.');
  if (actual !== declared) throw invalid(`The \`content\` field is ${actual}, not the ${declared} that \`content_type\` says.`);
  return { contentType: actual, content: bytes };
}
