// Debian's OpenDKIM as a milter for the SMTP bench's signing Postfix listener (SMTP.md): a relay
// that sends for customers must sign, so the fair peer of Herald is Postfix plus OpenDKIM. One
// `opendkim -f -x FILE` child per run, on a loopback TCP port, signing mail From the bench's
// sending domain with an RSA-2048 key (Herald's key size), rsa-sha256, relaxed/relaxed (Herald's
// canonicalization), From over-signed (as Herald does). The public key is published on the bench's
// DNS so that the dumps can be verified (mailauth) after each phase.
import { ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { run } from './smtp-options';

export const OPENDKIM_SELECTOR = 'opendkim';

export interface OpenDkimOptions {
  /** A fresh directory for the configuration, the key and the pid file. */
  dir: string;
  port: number;
  /** The d= domain: the From domain of the bench's mail. */
  domain: string;
}

export class OpenDkim {
  private constructor(
    private readonly child: ChildProcess,
    /** The DKIM key record to publish: `<selector>._domainkey.<domain>` TXT. */
    readonly record: { name: string; value: string },
    readonly milter: string,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(o: OpenDkimOptions): Promise<OpenDkim> {
    mkdirSync(o.dir, { recursive: true });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = join(o.dir, `${OPENDKIM_SELECTOR}.private`);
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
    // The package's own user, as its service runs; the key is that user's alone.
    const uid = Number((await run('id', ['-u', 'opendkim'])).stdout.trim());
    chownSync(keyFile, uid, -1);
    const conf = join(o.dir, 'opendkim.conf');
    writeFileSync(
      conf,
      [
        'Syslog no',
        'Mode s',
        `Domain ${o.domain}`,
        `Selector ${OPENDKIM_SELECTOR}`,
        `KeyFile ${keyFile}`,
        'SignatureAlgorithm rsa-sha256',
        'Canonicalization relaxed/relaxed',
        'OversignHeaders From',
        // The loopback client (the shim) is internal: its mail is signed (the default list, spelled out).
        'InternalHosts 127.0.0.1',
        `Socket inet:${o.port}@[127.0.0.1]`,
        `PidFile ${join(o.dir, 'opendkim.pid')}`,
        'UserID opendkim',
        // The key sits under /tmp (world-writable): OpenDKIM would refuse it for the directory alone.
        'RequireSafeKeys false',
        '',
      ].join('\n'),
    );
    const child = spawn('opendkim', ['-f', '-x', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`opendkim exited ${child.exitCode}: ${output}`);
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect({ host: '127.0.0.1', port: o.port });
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      });
      if (ok) break;
      if (i > 100) throw new Error(`opendkim did not listen on 127.0.0.1:${o.port}: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    return new OpenDkim(
      child,
      { name: `${OPENDKIM_SELECTOR}._domainkey.${o.domain}`, value: `v=DKIM1; k=rsa; p=${spki}` },
      `inet:127.0.0.1:${o.port}`,
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }
}
