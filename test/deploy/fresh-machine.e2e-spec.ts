import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(120_000);

const SCRIPTS = join(__dirname, '..', '..', 'deploy', 'local');
/** The server programs a fresh Debian machine with only Node lacks (PostgreSQL's client tools too). */
const HIDDEN = /^(pg_.*|psql|initdb|postgres|postmaster|redis-server|nats-server)$/;
const REAL_PG_LIB = '/usr/lib/postgresql';
const IS_ROOT = process.getuid?.() === 0;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Each call of the installer stub: its arguments. */
  installs: string[];
}

/**
 * A fresh machine for deploy/local/ensure-services.sh: a PATH of one folder with symlinks to every
 * program of this machine's PATH but the servers' (HIDDEN), an empty PostgreSQL library folder
 * (HERALD_POSTGRES_LIB), a data folder of its own (HERALD_DATA_DIR), and instead of apt-get a stub
 * (HERALD_APT_GET) that records its arguments and, when told, "installs" by linking the real
 * programs back into that PATH and library folder. apt-get itself never runs in this test.
 */
class FreshMachine {
  readonly dir = mkdtempSync(join(tmpdir(), 'herald-fresh-'));
  readonly bin = join(this.dir, 'bin');
  readonly pgLib = join(this.dir, 'postgresql');
  readonly data = join(this.dir, 'data');
  readonly record = join(this.dir, 'installs.log');
  readonly installer = join(this.dir, 'apt-get');

  constructor(options: { installs: 'links' | 'fails' }) {
    // The private PostgreSQL runs as `postgres` when the script runs as root: it must reach its folder.
    chmodSync(this.dir, 0o755);
    for (const folder of [this.bin, this.pgLib, this.data]) mkdirSync(folder);
    for (const folder of (process.env.PATH ?? '').split(':').filter(Boolean)) {
      if (!existsSync(folder)) continue;
      for (const name of readdirSync(folder)) {
        if (HIDDEN.test(name) || existsSync(join(this.bin, name))) continue;
        symlinkSync(join(folder, name), join(this.bin, name));
      }
    }
    const real = (name: string) => ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/bin', '/sbin'].map((d) => join(d, name)).find(existsSync);
    const pgVersion = readdirSync(REAL_PG_LIB).sort().pop();
    const links =
      options.installs === 'links'
        ? `for pkg in "$@"; do
  case $pkg in
    postgresql-15 | postgresql-client-15) ln -sfn '${REAL_PG_LIB}/${pgVersion}' '${this.pgLib}/${pgVersion}' ;;
    redis-server) ln -sf '${real('redis-server')}' '${this.bin}/redis-server' ;;
    nats-server) ln -sf '${real('nats-server')}' '${this.bin}/nats-server' ;;
  esac
done`
        : 'exit 100';
    writeFileSync(this.installer, `#!/usr/bin/env bash\nprintf '%s\\n' "$*" >>'${this.record}'\n[[ $1 == install ]] || exit 0\n${links}\n`, {
      mode: 0o755,
    });
  }

  /** ensure-services.sh with the given URLs; `as`: root (a user namespace's root when the suite is not root) or nobody. */
  run(env: Record<string, string>, as: 'root' | 'nobody'): Promise<Run> {
    const script = join(SCRIPTS, 'ensure-services.sh');
    const command =
      as === 'nobody'
        ? IS_ROOT
          ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '/bin/bash', script]
          : ['/bin/bash', script]
        : IS_ROOT
          ? ['/bin/bash', script]
          : ['unshare', '--user', '--map-root-user', '/bin/bash', script];
    const fullEnv = {
      PATH: this.bin,
      HOME: this.dir,
      HERALD_APT_GET: this.installer,
      HERALD_DATA_DIR: this.data,
      HERALD_POSTGRES_LIB: this.pgLib,
      ...env,
    };
    return new Promise((resolve) => {
      execFile(command[0]!, command.slice(1), { env: fullEnv, cwd: this.dir, timeout: 100_000 }, (error, stdout, stderr) => {
        const installs = existsSync(this.record) ? readFileSync(this.record, 'utf8').split('\n').filter(Boolean) : [];
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr, installs });
      });
    });
  }

  /** Stops what the script started here (stop-services.sh, pointed at this data folder) and removes it all. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) =>
      execFile(join(SCRIPTS, 'stop-services.sh'), [], { env: { ...process.env, HERALD_DATA_DIR: this.data } }, () => resolve()),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Loopback ports where nothing listens. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const server = createServer();
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

const urls = ([pg, redis, nats]: number[]) => ({
  DATABASE_URL: `postgres://postgres@127.0.0.1:${pg}/herald_fresh`,
  REDIS_URL: `redis://127.0.0.1:${redis}`,
  NATS_URL: `nats://127.0.0.1:${nats}`,
});
/** The machine's shared services, which answer (the maintenance database: no psql needed to check it exists). */
const SHARED = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
  REDIS_URL: 'redis://127.0.0.1:6379',
  NATS_URL: 'nats://127.0.0.1:4222',
};

/**
 * Issue 17, item 6: a machine with Node and none of the servers. ensure-services.sh (run by
 * `npm start`, `npm test` and the benches) installs what it must start, as root, in one apt-get
 * call and goes on; as another user it stops with the one command to run.
 */
describe('ensure-services.sh on a fresh machine', () => {
  const machines: FreshMachine[] = [];
  const machine = (options: { installs: 'links' | 'fails' } = { installs: 'links' }) => {
    const m = new FreshMachine(options);
    machines.push(m);
    return m;
  };
  afterAll(async () => {
    for (const m of machines) await m.close();
  });

  it('as root: installs the three servers in one apt-get call, then starts them and creates the database', async () => {
    const m = machine();
    // A user namespace's root cannot become `postgres`: then Postgres is the machine's, already answering.
    const env = IS_ROOT ? urls(await freePorts(3)) : { ...urls(await freePorts(3)), DATABASE_URL: SHARED.DATABASE_URL };
    const packages = IS_ROOT ? 'postgresql-15 redis-server nats-server' : 'redis-server nats-server';
    const run = await m.run(env, 'root');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.installs).toEqual([`install -y --no-install-recommends ${packages}`]);
    expect(run.stdout).toContain(`ensure-services: installing ${packages} (apt-get, as root;`);
    if (IS_ROOT) {
      expect(run.stdout).toMatch(/started a private PostgreSQL 1\d\.\d+ on 127\.0\.0\.1:\d+/);
      expect(run.stdout).toContain('created database herald_fresh');
    }
    expect(run.stdout).toMatch(/started a private Redis [\d.]+ on 127\.0\.0\.1:\d+/);
    expect(run.stdout).toMatch(/started a private NATS [\d.]+ with JetStream on 127\.0\.0\.1:\d+/);

    // Run again: everything answers, nothing is installed or started, nothing is said.
    const again = await m.run(env, 'root');
    expect(again).toEqual({ code: 0, stdout: '', stderr: '', installs: run.installs });
  });

  it('as another user: stops before anything, printing the one command to run', async () => {
    const m = machine();
    const run = await m.run(urls(await freePorts(3)), 'nobody');
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'ensure-services: postgresql-15 redis-server nats-server must be installed to start the services Herald needs on this machine, ' +
        'and only root can install them. Run: sudo apt-get install -y postgresql-15 redis-server nats-server\n',
      installs: [],
    });
  });

  it('installs only what is missing for a service that does not answer: none when the services answer', async () => {
    const m = machine();
    const [redis] = await freePorts(1);
    // Postgres and NATS answer (the machine's shared ones), Redis does not: only redis-server is missing.
    const run = await m.run({ ...SHARED, REDIS_URL: `redis://127.0.0.1:${redis}` }, 'nobody');
    expect(run).toMatchObject({ code: 1, installs: [] });
    expect(run.stderr).toContain('Run: sudo apt-get install -y redis-server\n');
    const answering = await m.run(SHARED, 'nobody');
    expect(answering).toEqual({ code: 0, stdout: '', stderr: '', installs: [] });
    // A database other than the maintenance one is checked with psql, which is hidden too: only the client is missing.
    const named = await m.run({ ...SHARED, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/herald' }, 'nobody');
    expect(named).toMatchObject({ code: 1, installs: [] });
    expect(named.stderr).toContain('Run: sudo apt-get install -y postgresql-client-15\n');
    // A service on another host is never a reason to install anything.
    const remote = await m.run({ ...SHARED, REDIS_URL: 'redis://192.0.2.1:6379' }, 'nobody');
    expect(remote.installs).toEqual([]);
    expect(remote.stderr).toContain('Redis does not answer at 192.0.2.1:6379 (REDIS_URL); that host is not this machine, so nothing was started');
  });

  it('as root: says what failed when apt-get fails, after refreshing the package lists once', async () => {
    const m = machine({ installs: 'fails' });
    const run = await m.run({ ...SHARED, NATS_URL: `nats://127.0.0.1:${(await freePorts(1))[0]}` }, 'root');
    expect(run.code).toBe(1);
    expect(run.installs).toEqual(['install -y --no-install-recommends nats-server', 'update', 'install -y --no-install-recommends nats-server']);
    expect(run.stderr).toContain('ensure-services: apt-get could not install nats-server; see');
  });

  it('as root without apt-get: names the packages and says to install them another way', async () => {
    const m = machine();
    const run = await m.run(
      { ...SHARED, NATS_URL: `nats://127.0.0.1:${(await freePorts(1))[0]}`, HERALD_APT_GET: join(m.dir, 'no-such-apt-get') },
      'root',
    );
    expect(run).toMatchObject({ code: 1, installs: [] });
    expect(run.stderr).toContain('nats-server must be installed to start the services Herald needs, and there is no apt-get here');
  });
});
