import { hkdfSync, timingSafeEqual } from 'node:crypto';
import { HmacSha256Key } from '@herald/core';

/**
 * Signed tracking tokens: the last path segment of a pixel (`/t/o/<token>`) or a rewritten link
 * (`/t/c/<token>`). A token carries everything its hit needs, so a redirect never reads the
 * database: the email id, the recipient's position in the email (a position, not the address,
 * so a forwarded link does not tell who received it), when it was signed (at delivery), and for
 * a click the link's index in the html and its target URL. An HMAC-SHA256 (truncated to 128
 * bits) over the kind and all of that closes it: a modified, truncated or forged token, or one
 * signed with a key no longer configured, does not verify, so the redirect goes only to links
 * Herald signed (no open redirect).
 *
 * Layout, base64url: version (1) · email id (16) · position (2) · signed at, unix seconds (4) ·
 * [click: link index (2) · URL (UTF-8, rest)] · MAC (16).
 */

export type TrackingKind = 'open' | 'click';

export interface OpenClaims {
  kind: 'open';
  emailId: string;
  position: number;
  signedAt: Date;
}

export interface ClickClaims {
  kind: 'click';
  emailId: string;
  position: number;
  signedAt: Date;
  link: number;
  url: string;
}

export type TrackingClaims = OpenClaims | ClickClaims;

const VERSION = 1;
const MAC_BYTES = 16;
const HEAD_BYTES = 1 + 16 + 2 + 4;
/** A link longer than this stays as it is (untracked): the token must fit in any URL. */
export const MAX_TRACKED_URL_BYTES = 2048;
const KIND_TAG: Record<TrackingKind, Buffer> = { open: Buffer.of(0x6f), click: Buffer.of(0x63) };
/** For development and tests only; production derives its key from DKIM_ENCRYPTION_KEY or sets TRACKING_KEYS. */
const DEVELOPMENT_SECRET = Buffer.from('herald development tracking secret, not for production');

/** The signing key first, then the ones that still verify. */
export class TrackingKeys {
  private readonly keys: readonly HmacSha256Key[];

  private constructor(keys: readonly Buffer[]) {
    this.keys = keys.map((key) => new HmacSha256Key(key));
  }

  /**
   * TRACKING_KEYS (base64) when set; otherwise one key derived (HKDF-SHA256, info `herald
   * tracking`) from the DKIM encryption key, or from a development constant without it.
   */
  static fromConfig(config: { TRACKING_KEYS?: readonly string[]; DKIM_ENCRYPTION_KEY?: string }): TrackingKeys {
    if (config.TRACKING_KEYS?.length) return new TrackingKeys(config.TRACKING_KEYS.map((k) => Buffer.from(k, 'base64')));
    const secret = config.DKIM_ENCRYPTION_KEY === undefined ? DEVELOPMENT_SECRET : Buffer.from(config.DKIM_ENCRYPTION_KEY, 'base64');
    return new TrackingKeys([Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'herald tracking', 32))]);
  }

  static of(keys: Buffer[]): TrackingKeys {
    if (!keys.length) throw new Error('TrackingKeys needs at least one key');
    return new TrackingKeys(keys);
  }

  sign(claims: TrackingClaims): string {
    const body = encodeBody(claims);
    return Buffer.concat([body, mac(this.keys[0]!, claims.kind, body)]).toString('base64url');
  }

  /** The claims of a token of `kind` that one of the keys signed; null for anything else. */
  verify(kind: TrackingKind, token: string): TrackingClaims | null {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return null;
    const bytes = Buffer.from(token, 'base64url');
    const min = HEAD_BYTES + (kind === 'click' ? 2 : 0) + MAC_BYTES;
    if (bytes.length < min || bytes[0] !== VERSION) return null;
    // A non-canonical encoding (extra trailing bits) decodes to the same bytes: refuse it, one URL per link.
    if (bytes.toString('base64url') !== token) return null;
    const body = bytes.subarray(0, bytes.length - MAC_BYTES);
    const given = bytes.subarray(bytes.length - MAC_BYTES);
    if (!this.keys.some((key) => timingSafeEqual(mac(key, kind, body), given))) return null;
    return decodeBody(kind, body);
  }
}

/** HMAC-SHA256 over the kind's tag and the body, truncated. */
function mac(key: HmacSha256Key, kind: TrackingKind, body: Buffer): Buffer {
  return key.digest(KIND_TAG[kind], body).subarray(0, MAC_BYTES);
}

function encodeBody(claims: TrackingClaims): Buffer {
  const url = claims.kind === 'click' ? Buffer.from(claims.url, 'utf8') : null;
  const body = Buffer.allocUnsafe(HEAD_BYTES + (url ? 2 + url.length : 0));
  body[0] = VERSION;
  Buffer.from(claims.emailId.replace(/-/g, ''), 'hex').copy(body, 1);
  body.writeUInt16BE(claims.position, 17);
  body.writeUInt32BE(Math.floor(claims.signedAt.getTime() / 1000), 19);
  if (claims.kind === 'click') {
    body.writeUInt16BE(claims.link, HEAD_BYTES);
    url!.copy(body, HEAD_BYTES + 2);
  }
  return body;
}

function decodeBody(kind: TrackingKind, body: Buffer): TrackingClaims | null {
  const hex = body.toString('hex', 1, 17);
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const position = body.readUInt16BE(17);
  const signedAt = new Date(body.readUInt32BE(19) * 1000);
  if (kind === 'open') return body.length === HEAD_BYTES ? { kind, emailId, position, signedAt } : null;
  return { kind, emailId, position, signedAt, link: body.readUInt16BE(HEAD_BYTES), url: body.toString('utf8', HEAD_BYTES + 2) };
}
