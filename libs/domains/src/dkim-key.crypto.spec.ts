import { createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import {
  decryptPrivateKey,
  dkimEncryptionKey,
  dkimRecordValue,
  encryptPrivateKey,
  generateDkimKey,
  newSelector,
  publicKeySpki,
} from './dkim-key.crypto';
import type { DkimAlgorithm } from './domain.types';

const KEY = randomBytes(32);
const MESSAGE = [
  'From: Acme <hello@acme.example>',
  'To: jane@example.com',
  'Subject: Welcome',
  'Date: Tue, 24 Nov 2026 10:00:00 +0000',
  'Message-ID: <1@acme.example>',
  '',
  'Hello Jane',
  '',
].join('\r\n');

describe('DKIM keys', () => {
  it('makes an RSA-2048 key whose p= is the base64 DER SubjectPublicKeyInfo', async () => {
    const key = await generateDkimKey('rsa-sha256');
    const publicKey = createPublicKey({ key: Buffer.from(key.publicKey, 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyType).toBe('rsa');
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(dkimRecordValue('rsa-sha256', key.publicKey)).toBe(`v=DKIM1; k=rsa; p=${key.publicKey}`);
  });

  it('makes an Ed25519 key whose p= is the raw 32-byte public key (RFC 8463)', async () => {
    const key = await generateDkimKey('ed25519-sha256');
    expect(Buffer.from(key.publicKey, 'base64')).toHaveLength(32);
    const publicKey = createPublicKey({ key: publicKeySpki('ed25519-sha256', key.publicKey), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyType).toBe('ed25519');
    expect(dkimRecordValue('ed25519-sha256', key.publicKey)).toBe(`v=DKIM1; k=ed25519; p=${key.publicKey}`);
  });

  it.each<[DkimAlgorithm, string | null]>([
    ['rsa-sha256', 'sha256'],
    ['ed25519-sha256', null],
  ])('encrypts a %s private key at rest and decrypts it to a PEM that signs for its p=', async (algorithm, digest) => {
    const key = await generateDkimKey(algorithm);
    const encrypted = encryptPrivateKey(key.privateKey, KEY);
    const pem = decryptPrivateKey(encrypted, KEY);
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const data = Buffer.from('the canonicalized headers');
    const signature = sign(digest, data, pem);
    const publicKey = createPublicKey({ key: publicKeySpki(algorithm, key.publicKey), format: 'der', type: 'spki' });
    expect(verify(digest, data, publicKey, signature)).toBe(true);
    expect(verify(digest, Buffer.from('other headers'), publicKey, signature)).toBe(false);
  });

  it.each<[DkimAlgorithm, string]>([
    ['rsa-sha256', 'rsa-sha256'],
    ['ed25519-sha256', 'ed25519-sha256'],
  ])('signs mail with a %s key that mailauth verifies against the published record', async (algorithm, expected) => {
    const key = await generateDkimKey(algorithm);
    const privateKey = decryptPrivateKey(encryptPrivateKey(key.privateKey, KEY), KEY);
    const selector = newSelector(algorithm);
    const signer = { signingDomain: 'acme.example', selector, privateKey, algorithm };
    const { signatures, errors } = await dkimSign(MESSAGE, { ...signer, signatureData: [signer] });
    expect(errors).toEqual([]);
    const published: Record<string, string> = { [`${selector}._domainkey.acme.example`]: dkimRecordValue(algorithm, key.publicKey) };
    const resolver = async (name: string) => {
      if (published[name]) return [[published[name]]];
      throw Object.assign(new Error(`no TXT at ${name}`), { code: 'ENOTFOUND' });
    };
    const result = await dkimVerify(signatures + MESSAGE, { resolver });
    expect(result.results).toHaveLength(1);
    expect(result.results[0]).toMatchObject({ signingDomain: 'acme.example', selector, algo: expected, status: { result: 'pass' } });
  });

  it('lays out version, IV, tag and ciphertext, with a fresh IV each time', async () => {
    const key = await generateDkimKey('ed25519-sha256');
    const a = encryptPrivateKey(key.privateKey, KEY);
    const b = encryptPrivateKey(key.privateKey, KEY);
    expect(a[0]).toBe(1);
    expect(a.subarray(1, 13).equals(b.subarray(1, 13))).toBe(false);
    // Ed25519 PKCS#8 DER is 48 bytes; GCM adds no padding.
    expect(a).toHaveLength(1 + 12 + 16 + 48);
    expect(decryptPrivateKey(a, KEY)).toBe(decryptPrivateKey(b, KEY));
  });

  it('refuses a tampered ciphertext, the wrong key and an unknown format version', async () => {
    const key = await generateDkimKey('ed25519-sha256');
    const encrypted = encryptPrivateKey(key.privateKey, KEY);
    const tampered = Buffer.from(encrypted);
    tampered[tampered.length - 1] ^= 1;
    expect(() => decryptPrivateKey(tampered, KEY)).toThrow();
    expect(() => decryptPrivateKey(encrypted, randomBytes(32))).toThrow();
    const future = Buffer.from(encrypted);
    future[0] = 2;
    expect(() => decryptPrivateKey(future, KEY)).toThrow(/format version/);
  });

  it('takes the encryption key from config, with a fixed development key outside production', () => {
    const configured = randomBytes(32);
    expect(dkimEncryptionKey({ NODE_ENV: 'production', DKIM_ENCRYPTION_KEY: configured.toString('base64') })).toEqual(configured);
    const dev = dkimEncryptionKey({ NODE_ENV: 'development', DKIM_ENCRYPTION_KEY: undefined });
    expect(dev).toHaveLength(32);
    expect(dkimEncryptionKey({ NODE_ENV: 'test', DKIM_ENCRYPTION_KEY: undefined })).toEqual(dev);
    expect(() => dkimEncryptionKey({ NODE_ENV: 'production', DKIM_ENCRYPTION_KEY: undefined })).toThrow(/required in production/);
  });
});

describe('newSelector', () => {
  it('is h + the UTC date + the algorithm + a random suffix, a valid DNS label', () => {
    const at = new Date('2026-11-25T23:30:00Z');
    expect(newSelector('rsa-sha256', [], at)).toMatch(/^h20261125r[a-z2-7]{4}$/);
    expect(newSelector('ed25519-sha256', [], at)).toMatch(/^h20261125e[a-z2-7]{4}$/);
  });

  it('never repeats a selector the domain has used', () => {
    const used: string[] = [];
    for (let i = 0; i < 500; i++) used.push(newSelector('rsa-sha256', used));
    expect(new Set(used).size).toBe(500);
  });
});
