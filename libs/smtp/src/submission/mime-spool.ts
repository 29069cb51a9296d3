import { newId } from '@herald/core';
import type { EmailStore, MimeUpload } from '@herald/messages';
import type { MessageSpool } from '../submission-port';
import type { BodyDigest } from './body-digest';

/** The body is stored in rows of about this size: few statements, and little held at once. */
export const SPOOL_CHUNK_BYTES = 1024 * 1024;

/**
 * The rest of a large message, stored in Postgres as the relay receives it (EmailStore.appendMime,
 * email_mime_uploads): bytes are copied into a chunk of SPOOL_CHUNK_BYTES, which is stored while
 * the next one fills; a full chunk waits while the one before is still being stored, which pauses
 * the client (backpressure). So the relay holds two chunks of a message, whatever its size. The
 * body's idempotency digest (when the message has a key) is fed on the way. A failed write is
 * kept and given by `end()`: the client is still read to the end of DATA, and answered then.
 */
export class MimeSpool implements MessageSpool {
  readonly id = newId();
  /** The bytes written to this spool (the message's size is its head's plus these). */
  bytes = 0;
  /** Two chunk buffers, filled in turn: one is stored while the other fills (reused, so no garbage per chunk). */
  private readonly buffers = [Buffer.allocUnsafe(SPOOL_CHUNK_BYTES), Buffer.allocUnsafe(SPOOL_CHUNK_BYTES)];
  private current = 0;
  private filled = 0;
  private chunks = 0;
  private storing: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private discarded = false;

  constructor(
    private readonly store: EmailStore,
    /** The body's digest, begun with the body bytes of the message's head; null when the message has no idempotency key. */
    readonly digest: BodyDigest | null,
  ) {}

  async write(chunk: Buffer): Promise<void> {
    if (this.failure !== null || this.discarded) return;
    this.bytes += chunk.length;
    this.digest?.update(chunk);
    for (let at = 0; at < chunk.length;) {
      const copied = chunk.copy(this.buffers[this.current], this.filled, at);
      this.filled += copied;
      at += copied;
      if (this.filled === SPOOL_CHUNK_BYTES) await this.flush();
    }
  }

  /** Waits until every byte written is stored; the upload to name in the email's insert. Throws what a write failed with. */
  async end(): Promise<MimeUpload> {
    if (this.filled > 0) await this.flush();
    await this.storing;
    if (this.failure !== null) throw this.failure;
    return { id: this.id, chunks: this.chunks };
  }

  async discard(): Promise<void> {
    this.discarded = true;
    await this.storing;
    // An accepted email's insert deleted its chunks already; a failure here leaves them to the sweep.
    await this.store.discardMime(this.id).catch(() => undefined);
  }

  /** Stores the current buffer, once the other one is stored (it is filled next). */
  private async flush(): Promise<void> {
    await this.storing;
    if (this.failure !== null || this.discarded) return;
    const data = this.buffers[this.current].subarray(0, this.filled);
    this.current = 1 - this.current;
    this.filled = 0;
    const seq = this.chunks++;
    this.storing = this.store.appendMime(this.id, seq, data).catch((error: unknown) => {
      this.failure = error;
    });
  }
}
