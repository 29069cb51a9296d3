import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@herald/config';
import { relayConfigProblems, relayHostname } from './relay.host';
import { generateSelfSigned, loadTlsCredentials } from './tls-certificate';

const load = (env: Record<string, string>) => loadConfig({}, env);

describe('SMTP relay configuration', () => {
  it('defaults to the five standard ports, and parses SMTP_PORTS into port and mode', () => {
    const config = load({});
    expect(config.SMTP_PORTS).toEqual([
      { port: 25, mode: 'starttls' },
      { port: 465, mode: 'tls' },
      { port: 587, mode: 'starttls' },
      { port: 2465, mode: 'tls' },
      { port: 2587, mode: 'starttls' },
    ]);
    expect(config).toMatchObject({ SMTP_HOST: '0.0.0.0', SMTP_IDLE_TIMEOUT_MS: 60_000, SMTP_SESSION_TIMEOUT_MS: 600_000 });
    expect(load({ SMTP_PORTS: ' 0:tls, 0:starttls ,2587:starttls' }).SMTP_PORTS).toEqual([
      { port: 0, mode: 'tls' },
      { port: 0, mode: 'starttls' },
      { port: 2587, mode: 'starttls' },
    ]);
  });

  it.each(['25', '25:ssl', '70000:tls', '25:tls:x', 'x:tls', '25:tls,25:starttls', ','])('refuses SMTP_PORTS=%s', (value) => {
    expect(() => load({ SMTP_PORTS: value })).toThrow(ConfigError);
    expect(() => load({ SMTP_PORTS: value })).toThrow(/SMTP_PORTS/);
  });

  it('takes SMTP_TLS_CERT and SMTP_TLS_KEY together or not at all', () => {
    expect(() => load({ SMTP_TLS_CERT: '/etc/cert.pem' })).toThrow(/SMTP_TLS_CERT: must be set together with SMTP_TLS_KEY/);
    expect(() => load({ SMTP_TLS_KEY: '/etc/key.pem' })).toThrow(/SMTP_TLS_CERT: must be set together with SMTP_TLS_KEY/);
    expect(load({ SMTP_TLS_CERT: '/c', SMTP_TLS_KEY: '/k' })).toMatchObject({ SMTP_TLS_CERT: '/c', SMTP_TLS_KEY: '/k' });
  });

  it('names the relay smtp.<region>.<MAIL_DOMAIN> unless SMTP_HOSTNAME says otherwise', () => {
    expect(relayHostname(load({ HERALD_REGION: 'eu-west-1', MAIL_DOMAIN: 'mail.example.com' }))).toBe('smtp.eu-west-1.mail.example.com');
    expect(relayHostname(load({ SMTP_HOSTNAME: 'smtp.example.com' }))).toBe('smtp.example.com');
  });

  it('reports a relay port that collides with the bounce MX', () => {
    expect(relayConfigProblems(load({}))).toEqual([expect.stringMatching(/^SMTP_PORTS: port 25 is also BOUNCE_MX_PORT/)]);
    expect(relayConfigProblems(load({ SMTP_HOST: '192.0.2.1', BOUNCE_MX_HOST: '192.0.2.2' }))).toEqual([]);
    expect(relayConfigProblems(load({ BOUNCE_MX_PORT: '2525' }))).toEqual([]);
    expect(relayConfigProblems(load({ SMTP_PORTS: '0:tls', BOUNCE_MX_PORT: '0' }))).toEqual([]);
  });
});

describe('loadTlsCredentials', () => {
  it('generates a self-signed certificate for the hostname outside production', async () => {
    const tls = await loadTlsCredentials({ hostname: 'smtp.us-east-1.herald.test', production: false });
    expect(tls.selfSigned).toBe(true);
    expect(tls.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(tls.key).toMatch(/PRIVATE KEY-----/);
    const { X509Certificate } = await import('node:crypto');
    expect(new X509Certificate(tls.cert).subjectAltName).toBe('DNS:smtp.us-east-1.herald.test');
  });

  it('refuses to run without configured files in production', async () => {
    await expect(loadTlsCredentials({ hostname: 'smtp.example.com', production: true })).rejects.toThrow(
      'SMTP_TLS_CERT and SMTP_TLS_KEY are required in production',
    );
  });

  it('says so when openssl is missing', async () => {
    await expect(loadTlsCredentials({ hostname: 'smtp.example.com', production: false, openssl: '/nonexistent/openssl' })).rejects.toThrow(
      /binary to generate a self-signed certificate is missing; install openssl or configure a certificate/,
    );
  });

  it('reads configured PEM files, and refuses unreadable or mismatched ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'relay-tls-'));
    const a = await generateSelfSigned('a.example.com');
    const b = await generateSelfSigned('b.example.com');
    await writeFile(join(dir, 'cert.pem'), a.cert);
    await writeFile(join(dir, 'key.pem'), a.key);
    await writeFile(join(dir, 'other-key.pem'), b.key);
    const files = { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem'), hostname: 'x', production: true };
    await expect(loadTlsCredentials(files)).resolves.toEqual({ cert: a.cert, key: a.key, selfSigned: false });
    await expect(loadTlsCredentials({ ...files, keyFile: join(dir, 'missing.pem') })).rejects.toThrow(/^SMTP_TLS_KEY: cannot read/);
    await expect(loadTlsCredentials({ ...files, keyFile: join(dir, 'other-key.pem') })).rejects.toThrow(/not a usable certificate and key/);
  });
});
