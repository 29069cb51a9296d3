import { hkdfSync, timingSafeEqual } from 'node:crypto';
import { HmacSha256Key } from '@herald/core';

/*
 * The per-recipient unsubscribe credentials of a broadcast email. Both name the email (whose
 * broadcast_recipients row says which contact and which broadcast), closed by an HMAC-SHA256:
 *   the link   https://<api>/unsubscribe/<token>, token = base64url(version · email id · MAC(16))
 *   the inbox  u-<email id hex>-<16 base32>@<return-path domain>, the List-Unsubscribe mailto:
 *              lowercase hex and base32 only, since some MTAs fold the case of local parts, and
 *              51 characters, under the 64 a local part may have.
 * A modified, truncated or forged token does not verify, so it can unsubscribe nobody. The keys
 * are the tracking keys (TRACKING_KEYS, or the key derived from DKIM_ENCRYPTION_KEY), each
 * stretched with HKDF under its own label: a tracking token can never pass for an unsubscribe one.
 */

const VERSION = 1;
const MAC_BYTES = 16;
const TOKEN_BYTES = 1 + 16 + MAC_BYTES;
const MAILBOX_TAG = 16;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const MAILBOX = new RegExp(`^u-([0-9a-f]{32})-([a-z2-7]{${MAILBOX_TAG}})@[^@\\s]+$`);
const UUID_HEX = /^[0-9a-f]{32}$/;
/** For development and tests only, as the tracking keys' own fallback. */
const DEVELOPMENT_SECRET = Buffer.from('herald development tracking secret, not for production');

export interface UnsubscribeKeySource {
  TRACKING_KEYS?: readonly string[];
  DKIM_ENCRYPTION_KEY?: string;
}

/** The signing key first, then the ones that still verify (a rotated TRACKING_KEYS keeps old links working). */
export class UnsubscribeKeys {
  /** Two MACs per broadcast email: each key's pads are hashed once (HmacSha256Key). */
  private constructor(private readonly keys: readonly HmacSha256Key[]) {}

  static fromConfig(config: UnsubscribeKeySource): UnsubscribeKeys {
    const secrets = config.TRACKING_KEYS?.length
      ? config.TRACKING_KEYS.map((k) => Buffer.from(k, 'base64'))
      : [config.DKIM_ENCRYPTION_KEY === undefined ? DEVELOPMENT_SECRET : Buffer.from(config.DKIM_ENCRYPTION_KEY, 'base64')];
    return new UnsubscribeKeys(secrets.map((s) => new HmacSha256Key(Buffer.from(hkdfSync('sha256', s, Buffer.alloc(0), 'herald unsubscribe', 32)))));
  }

  /** The link's token for an email. */
  token(emailId: string): string {
    const body = Buffer.concat([Buffer.of(VERSION), uuidBytes(emailId)]);
    return Buffer.concat([body, this.mac(this.keys[0]!, body).subarray(0, MAC_BYTES)]).toString('base64url');
  }

  /** The email a link token names, or null when it does not verify. */
  verifyToken(token: string): string | null {
    if (!/^[A-Za-z0-9_-]{44}$/.test(token)) return null;
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length !== TOKEN_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== token) return null;
    const body = bytes.subarray(0, 17);
    const given = bytes.subarray(17);
    if (!this.keys.some((key) => timingSafeEqual(this.mac(key, body).subarray(0, MAC_BYTES), given))) return null;
    return uuidOf(body.toString('hex', 1));
  }

  /** The List-Unsubscribe mailbox of an email at a Return-Path domain. */
  mailbox(emailId: string, returnPathDomain: string): string {
    const hex = emailId.replace(/-/g, '').toLowerCase();
    if (!UUID_HEX.test(hex)) throw new Error(`Not a UUID: ${emailId}`);
    return `u-${hex}-${this.tag(this.keys[0]!, hex)}@${returnPathDomain.toLowerCase()}`;
  }

  /** The email an unsubscribe mailbox names (any case, angle brackets ignored), or null. */
  verifyMailbox(address: string): string | null {
    const match = MAILBOX.exec(
      address
        .trim()
        .replace(/^<(.*)>$/, '$1')
        .toLowerCase(),
    );
    if (!match) return null;
    const [, hex, given] = match as unknown as [string, string, string];
    const ok = this.keys.some((key) => timingSafeEqual(Buffer.from(this.tag(key, hex)), Buffer.from(given)));
    return ok ? uuidOf(hex) : null;
  }

  private mac(key: HmacSha256Key, body: Buffer): Buffer {
    return key.digest('link', body);
  }

  private tag(key: HmacSha256Key, hex: string): string {
    const digest = key.digest('mailbox', hex);
    let out = '';
    // 16 characters of 5 bits = 80 bits, from the first 10 bytes.
    for (let bit = 0; out.length < MAILBOX_TAG; bit += 5) {
      const byte = bit >> 3;
      const word = (digest[byte]! << 8) | digest[byte + 1]!;
      out += BASE32[(word >> (11 - (bit & 7))) & 31];
    }
    return out;
  }
}

function uuidBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '').toLowerCase();
  if (!UUID_HEX.test(hex)) throw new Error(`Not a UUID: ${id}`);
  return Buffer.from(hex, 'hex');
}

function uuidOf(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
