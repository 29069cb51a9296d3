import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Herald's API key format:
 *
 *   hr_<publicId: 12 base62>_<secret: 32 base62><checksum: 6 base62>
 *
 * - `hr_` lets people and secret scanners recognise a leaked key at a glance.
 * - The public id (~71 bits, unique in `api_keys.public_id`) finds the key's row by index, so
 *   authentication is one lookup instead of hashing against every key.
 * - The secret carries 32 × log2(62) ≈ 190.5 bits of entropy.
 * - The checksum is the CRC32 of everything before it, in base62. Scanners (and Herald itself)
 *   can tell a real-looking key from a typo or random string offline, without the database.
 *   CRC32 catches every single-character change and every burst up to 32 bits, which is what
 *   copy-paste damage looks like. It is not a MAC: it filters noise, not attackers.
 */
export const API_KEY_PREFIX = 'hr_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PUBLIC_ID_LENGTH = 12;
const SECRET_LENGTH = 32;
/** 62^6 ≈ 5.7e10 > 2^32, so every CRC32 value fits in six base62 digits. */
const CHECKSUM_LENGTH = 6;
const SHAPE = new RegExp(`^${API_KEY_PREFIX}([0-9A-Za-z]{${PUBLIC_ID_LENGTH}})_[0-9A-Za-z]{${SECRET_LENGTH}}([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);
export const API_KEY_LENGTH = API_KEY_PREFIX.length + PUBLIC_ID_LENGTH + 1 + SECRET_LENGTH + CHECKSUM_LENGTH;

export interface GeneratedApiKey {
  /** The whole key; shown to its owner once and never stored. */
  token: string;
  publicId: string;
  /** What the database keeps instead of the token. */
  secretHash: Buffer;
}

export function generateApiKey(): GeneratedApiKey {
  const publicId = randomBase62(PUBLIC_ID_LENGTH);
  const body = `${API_KEY_PREFIX}${publicId}_${randomBase62(SECRET_LENGTH)}`;
  const token = body + checksum(body);
  return { token, publicId, secretHash: hashApiKey(token) };
}

/**
 * Reads the public id out of a key after checking its prefix, shape and checksum, so a typo,
 * a truncated paste or a guess never reaches the database. Null means "not a Herald key".
 */
export function parseApiKey(token: string): { publicId: string } | null {
  if (typeof token !== 'string' || token.length !== API_KEY_LENGTH) return null;
  const match = SHAPE.exec(token);
  if (!match) return null;
  const body = token.slice(0, -CHECKSUM_LENGTH);
  if (checksum(body) !== match[2]) return null;
  return { publicId: match[1]! };
}

/**
 * SHA-256 of the whole token. A slow password hash (argon2, bcrypt) exists to make guessing a
 * low-entropy human password expensive; a 190-bit random secret cannot be guessed at any hash
 * speed, so argon2 would add tens of milliseconds and a lot of CPU to every request (the send
 * path targets 2,000 requests/s) without adding security.
 */
export function hashApiKey(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison, so response timing does not reveal how much of a hash matched. */
export function verifySecret(token: string, secretHash: Buffer): boolean {
  const actual = hashApiKey(token);
  return actual.length === secretHash.length && timingSafeEqual(actual, secretHash);
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** Rejection sampling: bytes ≥ 248 (= 4 × 62) are skipped so every character is equally likely. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}
