// A private Postfix instance for the SMTP bench (smtp-bench.ts): its own configuration directory,
// its queue on disk (Postfix's default durable queue: every message is written and fsync'd to the
// queue before the 250), listening on a loopback port, relaying every message to one host:port
// (the bench's smtp-sink) with no DNS lookups. Started with `postfix -c DIR start` and stopped with
// `postfix -c DIR stop`. With `signing`, a second listener passes every message through a DKIM
// milter (bench-opendkim.ts) before it is queued; the first listener stays plain.
//
// Postfix refuses `-c DIR` (silently, exit 1) unless the default /etc/postfix/main.cf lists DIR in
// `alternate_config_directories`: `start` adds this instance's directory to that list (creating the
// file when the package was installed with "No configuration") and `stop` takes it out again; both
// say so on stderr. Needs root (the bench runs smtp-sink and Postfix as root anyway).
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const DEFAULT_MAIN_CF = '/etc/postfix/main.cf';
const LIST = 'alternate_config_directories';

/** The daemons of the instance (master.cf); the rest of Debian's master.cf (pipes to maildrop, uucp, ...) is left out. */
const SERVICES = [
  'pickup unix n - n 60 1 pickup',
  'cleanup unix n - n - 0 cleanup',
  'qmgr unix n - n 300 1 qmgr',
  'tlsmgr unix - - n 1000? 1 tlsmgr',
  'rewrite unix - - n - - trivial-rewrite',
  'bounce unix - - n - 0 bounce',
  'defer unix - - n - 0 bounce',
  'trace unix - - n - 0 bounce',
  'verify unix - - n - 1 verify',
  'flush unix n - n 1000? 0 flush',
  'proxymap unix - - n - - proxymap',
  'proxywrite unix - - n - 1 proxymap',
  'smtp unix - - n - - smtp',
  'relay unix - - n - - smtp',
  'showq unix n - n - - showq',
  'error unix - - n - - error',
  'retry unix - - n - - error',
  'discard unix - - n - - discard',
  'anvil unix - - n - 1 anvil',
  'scache unix - - n - 1 scache',
  'postlog unix-dgram n - n - 1 postlogd',
];

export interface PostfixOptions {
  /** A fresh directory for conf/, queue/, data/ and the mail log. */
  dir: string;
  listenPort: number;
  relayHost: string;
  relayPort: number;
  /** PEM files for STARTTLS on the listener. */
  certFile: string;
  keyFile: string;
  /** A second listener whose mail the milter (`inet:HOST:PORT`) signs. */
  signing?: { listenPort: number; milter: string };
}

function readList(text: string): { lines: string[]; index: number; dirs: string[] } {
  const lines = text.split('\n');
  const index = lines.findIndex((l) => new RegExp(`^${LIST}\\s*=`).test(l));
  const dirs =
    index < 0
      ? []
      : lines[index]!.replace(new RegExp(`^${LIST}\\s*=`), '')
          .split(/[\s,]+/)
          .filter(Boolean);
  return { lines, index, dirs };
}

/** Adds or removes a directory of `alternate_config_directories` in /etc/postfix/main.cf. */
function editAlternateDirs(dir: string, add: boolean): void {
  const text = existsSync(DEFAULT_MAIN_CF) ? readFileSync(DEFAULT_MAIN_CF, 'utf8') : '';
  const { lines, index, dirs } = readList(text);
  const has = dirs.includes(dir);
  if (add === has) return;
  const next = add ? [...dirs, dir] : dirs.filter((d) => d !== dir);
  const kept = lines.filter((line, i) => i !== index && !(i === lines.length - 1 && line === ''));
  if (next.length > 0) kept.push(`${LIST} = ${next.join(' ')}`);
  // An empty main.cf is what was there before (Debian's "No configuration" installs none): remove it.
  if (kept.every((line) => line.trim() === '')) rmSync(DEFAULT_MAIN_CF, { force: true });
  else writeFileSync(DEFAULT_MAIN_CF, `${kept.join('\n')}\n`);
  process.stderr.write(
    `bench: ${add ? 'added' : 'removed'} ${dir} ${add ? 'to' : 'from'} ${LIST} in ${DEFAULT_MAIN_CF} (Postfix only runs a private instance listed there)\n`,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class PostfixInstance {
  readonly confDir: string;
  private running = false;

  constructor(private readonly o: PostfixOptions) {
    this.confDir = join(o.dir, 'conf');
  }

  get logFile(): string {
    return join(this.o.dir, 'maillog');
  }

  async start(): Promise<void> {
    const { dir } = this.o;
    const queue = join(dir, 'queue');
    const data = join(dir, 'data');
    for (const d of [this.confDir, queue, data]) mkdirSync(d, { recursive: true });
    const { uid } = await run('id', ['-u', 'postfix']).then((r) => ({ uid: Number(r.stdout.trim()) }));
    chownSync(data, uid, -1);
    writeFileSync(
      join(this.confDir, 'main.cf'),
      [
        'compatibility_level = 3.6',
        'myhostname = postfix.bench.test',
        'mydomain = bench.test',
        'myorigin = $myhostname',
        'mydestination =',
        'local_recipient_maps =',
        'alias_maps =',
        'alias_database =',
        'biff = no',
        'mynetworks = 127.0.0.0/8',
        'smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination',
        `relayhost = [${this.o.relayHost}]:${this.o.relayPort}`,
        'default_transport = smtp',
        // no DNS: the relay host is an address literal
        'smtp_dns_support_level = disabled',
        'smtp_host_lookup = native',
        `queue_directory = ${queue}`,
        `data_directory = ${data}`,
        'mail_owner = postfix',
        'setgid_group = postdrop',
        'inet_interfaces = 127.0.0.1',
        'inet_protocols = ipv4',
        `maillog_file = ${this.logFile}`,
        `maillog_file_prefixes = ${dir}`,
        // STARTTLS offered to clients, as Herald's relay does; the outbound leg is plain (smtp-sink has no TLS)
        'smtpd_tls_security_level = may',
        `smtpd_tls_cert_file = ${this.o.certFile}`,
        `smtpd_tls_key_file = ${this.o.keyFile}`,
        'smtp_tls_security_level = none',
        // A milter that fails answers 4xx: nothing goes out unsigned from the signing listener.
        'milter_default_action = tempfail',
        '',
      ].join('\n'),
    );
    const listeners = [`127.0.0.1:${this.o.listenPort} inet n - n - - smtpd`];
    const signing = this.o.signing;
    if (signing) listeners.push(`127.0.0.1:${signing.listenPort} inet n - n - - smtpd -o smtpd_milters=${signing.milter}`);
    writeFileSync(join(this.confDir, 'master.cf'), [...listeners, ...SERVICES, ''].join('\n'));
    editAlternateDirs(this.confDir, true);
    try {
      await run('postfix', ['-c', this.confDir, 'check']);
      await run('postfix', ['-c', this.confDir, 'start']);
    } catch (error) {
      const log = existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8').split('\n').slice(-10).join('\n') : '(no mail log)';
      throw new Error(`postfix -c ${this.confDir} start failed: ${(error as Error).message}\n${log}`);
    }
    this.running = true;
  }

  /** The master daemon's pid (its children are the smtpd, cleanup, qmgr, smtp, ... processes). */
  masterPid(): number {
    return Number(readFileSync(join(this.o.dir, 'queue', 'pid', 'master.pid'), 'utf8').trim());
  }

  /** Messages still in the queue (incoming, active, deferred, ...): `postqueue -j` lines. */
  async queued(): Promise<number> {
    const { stdout } = await run('postqueue', ['-c', this.confDir, '-j']);
    return stdout.split('\n').filter(Boolean).length;
  }

  async stop(): Promise<void> {
    try {
      if (this.running) {
        const master = this.masterPid();
        await run('postfix', ['-c', this.confDir, 'stop']).catch(() => undefined);
        // `postfix stop` signals the master; wait until it and its daemons are gone.
        for (let i = 0; i < 100 && alive(master); i++) await new Promise((r) => setTimeout(r, 100));
      }
      this.running = false;
    } finally {
      editAlternateDirs(this.confDir, false);
    }
  }
}
