import { HeraldError } from '@herald/core';
import { parseImageUpload } from './image-input.validation';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const rejects = (body: unknown, words: RegExp) => {
  let thrown: unknown;
  try {
    parseImageUpload(body);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(HeraldError);
  expect((thrown as HeraldError).code).toBe('validation_error');
  expect((thrown as HeraldError).message).toMatch(words);
};

describe('parseImageUpload', () => {
  it('answers the bytes and the format they are', () => {
    const png = parseImageUpload({ content_type: 'image/png', content: PNG.toString('base64'), filename: 'a.png' });
    expect(png.contentType).toBe('image/png');
    expect(png.content.equals(PNG)).toBe(true);
    expect(parseImageUpload({ content_type: 'image/gif', content: GIF.toString('base64') }).contentType).toBe('image/gif');
  });

  it('names the field that is wrong', () => {
    rejects(null, /JSON object/);
    rejects({ content_type: 'image/svg+xml', content: 'PHN2Zz4=' }, /`content_type` field must be one of image\/png/);
    rejects({ content_type: 'image/png' }, /`content` field must be the image file, base64-encoded/);
    rejects({ content_type: 'image/png', content: 'not base64!' }, /`content` field is not valid base64/);
    rejects({ content_type: 'image/png', content: Buffer.from('<html>').toString('base64') }, /not a PNG, JPEG, GIF or WebP/);
    rejects({ content_type: 'image/png', content: GIF.toString('base64') }, /is image\/gif, not the image\/png/);
  });

  it('refuses more than 5 MB', () => {
    const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]);
    rejects({ content_type: 'image/png', content: big.toString('base64') }, /up to 5242880 bytes/);
  });
});
