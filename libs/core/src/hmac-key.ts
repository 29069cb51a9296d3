import { createHash, type Hash } from 'node:crypto';

const SHA256_BLOCK = 64;

/**
 * An HMAC-SHA256 key (RFC 2104) for the MACs Herald computes per email or per request (tracking
 * tokens, unsubscribe links, VERP addresses): the key's two padded blocks, `key ⊕ ipad` and
 * `key ⊕ opad`, are hashed once, and each MAC continues copies of those two states. The same MAC
 * as `createHmac('sha256', key)`, without hashing both pads and setting up an HMAC context every
 * time (a third less CPU per MAC in the tracking host's profile).
 */
export class HmacSha256Key {
  private readonly inner: Hash;
  private readonly outer: Hash;

  constructor(key: Buffer) {
    const block = Buffer.alloc(SHA256_BLOCK);
    (key.length > SHA256_BLOCK ? createHash('sha256').update(key).digest() : key).copy(block);
    const pad = (byte: number) => block.map((b) => b ^ byte);
    this.inner = createHash('sha256').update(pad(0x36));
    this.outer = createHash('sha256').update(pad(0x5c));
  }

  /** The MAC of the parts, in order, as one message (strings as UTF-8). */
  digest(...parts: (Buffer | string)[]): Buffer {
    const inner = this.inner.copy();
    for (const part of parts) inner.update(part);
    return this.outer.copy().update(inner.digest()).digest();
  }
}
