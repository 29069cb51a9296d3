import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';

/** A PEM certificate (chain) and its private key. */
export interface TlsCredentials {
  cert: string;
  key: string;
  /** True when Herald made it up at boot (clients must turn verification off). */
  selfSigned: boolean;
}

export interface TlsSource {
  /** PEM file paths from config (SMTP_TLS_CERT / SMTP_TLS_KEY), both or neither. */
  certFile?: string;
  keyFile?: string;
  /** The name a generated certificate is made for. */
  hostname: string;
  /** Production refuses to run without configured files. */
  production: boolean;
  /** The openssl binary (tests point it elsewhere to see the error). */
  openssl?: string;
}

/**
 * The relay's certificate: the configured PEM files, or outside production a self-signed one for
 * the hostname, generated at boot with the openssl binary (Node has no X.509 generation).
 * Every failure is a boot error that says what to do.
 */
export async function loadTlsCredentials(source: TlsSource): Promise<TlsCredentials> {
  if (source.certFile !== undefined || source.keyFile !== undefined) {
    if (source.certFile === undefined || source.keyFile === undefined) {
      throw new Error('SMTP_TLS_CERT and SMTP_TLS_KEY must be set together (PEM file paths): both or neither');
    }
    const [cert, key] = await Promise.all([readPem(source.certFile, 'SMTP_TLS_CERT'), readPem(source.keyFile, 'SMTP_TLS_KEY')]);
    try {
      createSecureContext({ cert, key });
    } catch (error) {
      throw new Error(`SMTP_TLS_CERT / SMTP_TLS_KEY are not a usable certificate and key: ${message(error)}`);
    }
    return { cert, key, selfSigned: false };
  }
  if (source.production) {
    throw new Error('SMTP_TLS_CERT and SMTP_TLS_KEY are required in production: the SMTP relay does not run on a self-signed certificate there');
  }
  return { ...(await generateSelfSigned(source.hostname, source.openssl ?? 'openssl')), selfSigned: true };
}

async function readPem(path: string, name: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`${name}: cannot read ${path}: ${message(error)}`);
  }
}

const cache = new Map<string, Promise<{ cert: string; key: string }>>();

/** A self-signed P-256 certificate for `hostname`, valid a year; one per process and name. */
export function generateSelfSigned(hostname: string, openssl = 'openssl'): Promise<{ cert: string; key: string }> {
  const cacheKey = `${openssl}\0${hostname}`;
  let pending = cache.get(cacheKey);
  if (!pending) {
    pending = runOpenssl(hostname, openssl);
    pending.catch(() => cache.delete(cacheKey));
    cache.set(cacheKey, pending);
  }
  return pending;
}

async function runOpenssl(hostname: string, openssl: string): Promise<{ cert: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'herald-smtp-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const args = [
    'req',
    '-x509',
    '-nodes',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-days',
    '365',
    '-subj',
    `/CN=${hostname}`,
    '-addext',
    `subjectAltName=DNS:${hostname}`,
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ];
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(openssl, args, { timeout: 30_000 }, (error, _stdout, stderr) => {
        if (!error) return resolve();
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new Error(
            missing
              ? `SMTP relay: no SMTP_TLS_CERT / SMTP_TLS_KEY configured and the "${openssl}" binary to generate a self-signed certificate is missing; install openssl or configure a certificate`
              : `SMTP relay: generating a self-signed certificate with ${openssl} failed: ${String(stderr).trim() || error.message}`,
          ),
        );
      });
    });
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    return { cert, key };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
