import { ConfigError, HeraldConfig, loadConfig } from '@herald/config';
import { isHeraldError } from '@herald/core';
import { type HeraldDatabase, migrateAll, printableUrl } from '@herald/database';
import { createKey, createTeam } from './accounts.commands';
import { developmentSetup } from './development';
import { parseFlags, UsageError } from './args';
import { verifyDomain } from './domain.commands';
import { ROLES, RoleName, startAll, startRole, Started } from './roles';

const USAGE = `Usage: herald <command>
  all [--regions R1,R2]                 run every role in this process (migrations applied, dev key printed):
                                        the api and smtp once, a worker, webhooks and metrics for each served region
                                        (--regions sets HERALD_REGIONS; POST /domains refuses any other)
  api | smtp | worker | webhooks | metrics
                                        run one role
  migrate                               apply pending database migrations
  team create --name N [--region R] [--plan P] [--rate-limit N]
  key create --team ID [--permission full_access|sending_access] [--name N]
  domain verify NAME [--dry-run]        check a domain's DNS records now and show what DNS answered
  regions                               list the configured regions
Every command prints JSON. Configuration comes from the environment (see .env.example).`;

const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
/** Each migrated database as `herald migrate` prints it: its URL without the password, what it holds, what was applied. */
const printable = (databases: (HeraldDatabase & { applied: string[] })[]) =>
  databases.map((d) => ({ database: printableUrl(d.url), holds: d.holds, applied: d.applied }));

async function main(argv: string[]): Promise<void> {
  const { positional, flags } = parseFlags(argv);
  const [command, sub, argument] = positional;
  if (!command || command === 'help' || flags.help) return void process.stdout.write(`${USAGE}\n`);
  if (flags.regions !== undefined && command !== 'all') throw new UsageError('--regions is an option of `herald all` only');
  const config = loadConfig(
    process.env,
    command === 'all' && process.env.NODE_ENV !== 'production'
      ? {
          DEV_BOOTSTRAP: process.env.DEV_BOOTSTRAP ?? 'true',
          // Unprivileged ports for a laptop: the bounce MX, and the relay's implicit-TLS and STARTTLS ports.
          BOUNCE_MX_PORT: process.env.BOUNCE_MX_PORT ?? '2525',
          SMTP_PORTS: process.env.SMTP_PORTS ?? '2465:tls,2587:starttls',
          ...regionsFlag(flags),
        }
      : regionsFlag(flags),
  );

  if (command === 'regions') return print({ object: 'list', current: config.HERALD_REGION, data: config.HERALD_REGIONS });
  if (command === 'migrate') return print({ object: 'migrations', schema: config.DATABASE_SCHEMA, databases: printable(await migrateAll(config)) });
  if (command === 'team' && sub === 'create') return print(await createTeam(config, flags));
  if (command === 'key' && sub === 'create') return print(await createKey(config, flags));
  if (command === 'domain' && sub === 'verify') return print(await verifyDomain(config, argument, flags));
  if (command === 'all') return runAll(config);
  if ((ROLES as readonly string[]).includes(command)) return run([await startRole(command as RoleName, config)]);
  throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(' ')}"`);
}

/**
 * `--regions us-east-1,eu-west-1` (only `herald all` takes it): the served regions, HERALD_REGIONS,
 * the one list that says both which regions POST /domains accepts and which regions' workers run.
 * HERALD_REGION stays if it is one of them, else the first becomes the home region.
 */
function regionsFlag(flags: Record<string, string>): Record<string, string> {
  const value = flags.regions;
  if (value === undefined) return {};
  if (value === 'true' || !value.trim())
    throw new UsageError('--regions needs a comma-separated list of regions, e.g. --regions us-east-1,eu-west-1');
  const regions = value.split(',').map((r) => r.trim());
  const home = process.env.HERALD_REGION;
  return { HERALD_REGIONS: value, HERALD_REGION: home && regions.includes(home) ? home : regions[0] };
}

async function runAll(config: HeraldConfig): Promise<void> {
  const migrated = await migrateAll(config);
  const started = await startAll(config);
  const api = started.find((s) => s.role === 'api')!;
  // On the API's own application: a second one in this process would be one more pool, and its
  // logger options would apply to every role's lines.
  const credentials = config.DEV_BOOTSTRAP ? await api.run(() => developmentSetup(config, api.app)) : null;
  print({
    object: 'herald',
    region: config.HERALD_REGION,
    regions: config.HERALD_REGIONS,
    api_url: config.PUBLIC_API_URL ?? api.address,
    // The origin sign-in trusts (DashboardAuth's): DASHBOARD_URL first, so a passkey's site is the one printed.
    dashboard_url: `${(config.DASHBOARD_URL ?? config.PUBLIC_API_URL ?? api.address).replace(/\/+$/, '')}/dashboard/`,
    roles: Object.fromEntries(started.map((s) => [s.role === 'api' || s.role === 'smtp' ? s.role : `${s.role} ${s.region}`, s.address])),
    migrations: printable(migrated),
    ...(credentials && {
      team_id: credentials.teamId,
      api_key: credentials.token,
      sending_domain: credentials.from.split('@')[1],
      dashboard_user: credentials.user,
    }),
    try:
      credentials &&
      `curl -X POST ${api.address}/emails -H 'Authorization: Bearer ${credentials.token}' -H 'Content-Type: application/json' -d '{"from":"${credentials.from}","to":"delivered@herald.test","subject":"Hello","html":"<p>Hi</p>"}'`,
  });
  await run(started);
}

/** Keeps the roles running until SIGINT/SIGTERM, then closes them (each drains its own work). */
function run(started: Started[]): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      for (const s of [...started].reverse()) await s.close();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

main(process.argv.slice(2)).then(
  () => undefined,
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`herald: ${error.message}\n`);
    else if (error instanceof UsageError) process.stderr.write(`herald: ${error.message}\n\n${USAGE}\n`);
    else if (isHeraldError(error)) process.stderr.write(`${JSON.stringify({ error: error.code, message: error.message })}\n`);
    else process.stderr.write(`herald: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
