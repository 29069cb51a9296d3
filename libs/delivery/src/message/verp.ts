import { hkdfSync, timingSafeEqual } from 'node:crypto';
import { HmacSha256Key } from '@herald/core';

/**
 * VERP Return-Path addresses. Each email gets its own bounce address,
 * `b-<uuid hex>-<tag>@<return path domain>`, so a DSN names the email it is about however badly
 * the reporting MTA quotes the original. The tag is an HMAC of the id, so nobody can make Herald
 * record bounces (and suppress recipients) for emails by guessing or enumerating addresses.
 *
 * Everything is lowercase hex or base32: some MTAs fold the case of local parts.
 */

const PREFIX = 'b-';
/** 10 base32 chars = 50 bits of HMAC: too many to guess one address, short enough for 64. */
const TAG_LENGTH = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const UUID_HEX = /^[0-9a-f]{32}$/;
const ADDRESS = new RegExp(`^${PREFIX}([0-9a-f]{32})-([a-z2-7]{${TAG_LENGTH}})@[^@\\s]+$`);
/** For development and tests only; production derives the key from its DKIM encryption key. */
const DEVELOPMENT_SECRET = Buffer.from('herald development verp secret, not for production');

/** `b-<32 hex>-<10 base32>@<returnPathDomain>`; the local part is 45 characters. */
export function returnPathAddress(emailId: string, returnPathDomain: string, key: HmacSha256Key): string {
  const hex = emailId.replace(/-/g, '').toLowerCase();
  if (!UUID_HEX.test(hex)) throw new Error(`Not a UUID: ${emailId}`);
  return `${PREFIX}${hex}-${tag(hex, key)}@${returnPathDomain.toLowerCase()}`;
}

/**
 * The email id (a dashed UUID) a bounce address stands for, or null when the address is not one
 * of ours or its tag does not verify. Case-insensitive; surrounding angle brackets are ignored.
 * Only the exact format is accepted, no subaddress tails.
 */
export function parseReturnPath(address: string, key: HmacSha256Key): string | null {
  const match = ADDRESS.exec(
    address
      .trim()
      .replace(/^<(.*)>$/, '$1')
      .toLowerCase(),
  );
  if (!match) return null;
  const [, hex, given] = match;
  const expected = Buffer.from(tag(hex, key));
  if (!timingSafeEqual(Buffer.from(given), expected)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The HMAC key, derived (HKDF-SHA256, info `herald verp`) from the deployment's DKIM encryption
 * key so there is no extra secret to manage. Production always configures that key; `undefined`
 * falls back to a fixed development constant, whose addresses anyone could forge.
 */
export function verpKey(secret: Buffer | undefined): HmacSha256Key {
  return new HmacSha256Key(Buffer.from(hkdfSync('sha256', secret ?? DEVELOPMENT_SECRET, Buffer.alloc(0), 'herald verp', 32)));
}

function tag(uuidHex: string, key: HmacSha256Key): string {
  const digest = key.digest(uuidHex);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < TAG_LENGTH) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length === TAG_LENGTH) break;
    value &= (1 << bits) - 1;
  }
  return out;
}
