import { createHmac, randomBytes } from 'node:crypto';
import { HmacSha256Key } from './hmac-key';

describe('HmacSha256Key', () => {
  it('is HMAC-SHA256, for keys shorter than, as long as and longer than a block, over any parts', () => {
    for (const length of [0, 16, 32, 64, 65, 100]) {
      const key = randomBytes(length);
      const parts = [Buffer.of(0x63), 'mailbox', randomBytes(40), 'é ü'];
      const expected = parts.reduce((h, p) => h.update(p), createHmac('sha256', key)).digest('hex');
      expect(new HmacSha256Key(key).digest(...parts).toString('hex')).toBe(expected);
    }
  });

  it('is HMAC-SHA256 for messages of any length, before and after one outgrows its buffer', () => {
    const key = randomBytes(32);
    const mac = new HmacSha256Key(key);
    for (const length of [0, 1, 191, 192, 193, 255, 256, 257, 2_048, 5_000, 10, 70_000, 3]) {
      const message = `${'ü'.repeat(length % 7)}${randomBytes(length).toString('base64url')}`.slice(0, length + (length % 7));
      const body = randomBytes(length % 300);
      const expected = createHmac('sha256', key).update(message).update(body).digest('hex');
      expect(mac.digest(message, body).toString('hex')).toBe(expected);
    }
  });

  it('gives the same MAC every time (its pads are never overwritten)', () => {
    const key = new HmacSha256Key(randomBytes(32));
    expect(key.digest('a', 'b').equals(key.digest('a', 'b'))).toBe(true);
    expect(key.digest('ab').equals(key.digest('a', 'b'))).toBe(true);
    expect(key.digest('a').equals(key.digest('b'))).toBe(false);
  });
});
