import { createCipheriv, createDecipheriv, createHash, createPrivateKey, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { HeraldConfig } from '@herald/config';
import type { DkimAlgorithm } from './domain.types';

/*
 * DKIM key material: generating key pairs, the `p=` value of their DNS record, selectors, and
 * encrypting the private keys at rest.
 *
 * At rest a private key is its PKCS#8 DER encrypted with AES-256-GCM:
 *   version (1 byte) | IV (12 bytes) | GCM tag (16 bytes) | ciphertext
 * The version byte lets the format (or the key that encrypts it) change later without guessing.
 */

const generate = promisify(generateKeyPair);

export const RSA_MODULUS_BITS = 2048;
const FORMAT_V1 = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;
/** An Ed25519 SubjectPublicKeyInfo is this prefix followed by the raw 32-byte key (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A new key pair: the `p=` value to publish and the private key to encrypt. */
export interface GeneratedDkimKey {
  algorithm: DkimAlgorithm;
  /** RSA: base64 DER SubjectPublicKeyInfo. Ed25519 (RFC 8463): base64 of the raw 32-byte key. */
  publicKey: string;
  privateKey: KeyObject;
}

export async function generateDkimKey(algorithm: DkimAlgorithm): Promise<GeneratedDkimKey> {
  switch (algorithm) {
    case 'rsa-sha256': {
      // Async: a 2048-bit RSA key takes tens of milliseconds, too long for the event loop.
      const { publicKey, privateKey } = await generate('rsa', { modulusLength: RSA_MODULUS_BITS });
      return { algorithm, publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), privateKey };
    }
    case 'ed25519-sha256': {
      const { publicKey, privateKey } = await generate('ed25519');
      const spki = publicKey.export({ type: 'spki', format: 'der' });
      return { algorithm, publicKey: spki.subarray(ED25519_SPKI_PREFIX.length).toString('base64'), privateKey };
    }
    default: {
      const unknown: never = algorithm;
      throw new Error(`unknown DKIM algorithm ${String(unknown)}`);
    }
  }
}

/** The `k=` tag of the DNS record. */
export const dkimKeyType = (algorithm: DkimAlgorithm): 'rsa' | 'ed25519' => (algorithm === 'ed25519-sha256' ? 'ed25519' : 'rsa');

/** The DKIM TXT record's value: `v=DKIM1; k=rsa; p=MIIBIjAN...`. */
export const dkimRecordValue = (algorithm: DkimAlgorithm, publicKey: string): string => `v=DKIM1; k=${dkimKeyType(algorithm)}; p=${publicKey}`;

/** The DER SubjectPublicKeyInfo of a `p=` value, for whoever checks a signature against DNS. */
export function publicKeySpki(algorithm: DkimAlgorithm, publicKey: string): Buffer {
  const raw = Buffer.from(publicKey, 'base64');
  return algorithm === 'ed25519-sha256' ? Buffer.concat([ED25519_SPKI_PREFIX, raw]) : raw;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A selector for a new key: `h` + the UTC date + `r` (RSA) or `e` (Ed25519) + 4 random base32
 * characters, e.g. `h20261125r7kq2`. The date tells an operator reading DNS how old a key is;
 * the random part keeps selectors apart when keys are rotated several times a day, and makes a
 * selector say nothing guessable about the next one. The caller passes the domain's selectors in
 * use (retired ones included: a receiver may have cached them), and the database's unique
 * (domain_id, selector) is the final guard.
 */
export function newSelector(algorithm: DkimAlgorithm, taken: Iterable<string> = [], now: Date = new Date()): string {
  const used = new Set(taken);
  const date = now.toISOString().slice(0, 10).replace(/-/g, '');
  const kind = algorithm === 'ed25519-sha256' ? 'e' : 'r';
  for (;;) {
    const suffix = [...randomBytes(4)].map((b) => BASE32[b & 31]).join('');
    const selector = `h${date}${kind}${suffix}`;
    if (!used.has(selector)) return selector;
  }
}

/**
 * The key that encrypts DKIM private keys: DKIM_ENCRYPTION_KEY (32 bytes, base64). Without it
 * (allowed only outside production: the config schema refuses production without one), a fixed
 * development key derived from a public constant. That key protects nothing: anyone with the
 * source can decrypt, which is fine for local runs and tests and never acceptable in production.
 */
export function dkimEncryptionKey(config: Pick<HeraldConfig, 'DKIM_ENCRYPTION_KEY' | 'NODE_ENV'>): Buffer {
  if (config.DKIM_ENCRYPTION_KEY) return Buffer.from(config.DKIM_ENCRYPTION_KEY, 'base64');
  if (config.NODE_ENV === 'production') throw new Error('DKIM_ENCRYPTION_KEY is required in production');
  return createHash('sha256').update('herald development DKIM key, not a secret').digest();
}

export function encryptPrivateKey(privateKey: KeyObject | string, encryptionKey: Buffer): Buffer {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const plaintext = key.export({ type: 'pkcs8', format: 'der' });
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT_V1]), iv, cipher.getAuthTag(), ciphertext]);
}

/**
 * The private key as a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), what nodemailer's and
 * mailauth's DKIM signers take. Throws if the data was altered or the encryption key is wrong.
 */
export function decryptPrivateKey(encrypted: Buffer, encryptionKey: Buffer): string {
  if (encrypted.length <= HEADER_BYTES || encrypted[0] !== FORMAT_V1) {
    throw new Error('not an encrypted DKIM private key (unknown format version)');
  }
  const iv = encrypted.subarray(1, 1 + IV_BYTES);
  const tag = encrypted.subarray(1 + IV_BYTES, HEADER_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', encryptionKey, iv);
  decipher.setAuthTag(tag);
  const der = Buffer.concat([decipher.update(encrypted.subarray(HEADER_BYTES)), decipher.final()]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }).toString();
}
