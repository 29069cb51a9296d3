import { z } from 'zod';
import { bool, cidrList, int, list, oneUrl, planNumbers, regionIdCode, regionName, regionPairs, url } from './config-fields';
import { dashboardFields } from './dashboard-config.fields';
import { mailFields } from './mail-config.fields';

/**
 * The one typed configuration of every Herald role, read from the environment once at boot.
 * Each key is the environment variable's name; `.env.example` documents every one.
 */
export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HERALD_REGION: regionName.default('us-east-1'),
    HERALD_REGIONS: list(regionName).default(['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1']),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

    DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgres://postgres@127.0.0.1:5432/herald'),
    DATABASE_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]*$/, 'must be a lowercase SQL identifier')
      .default('public'),
    DATABASE_POOL_SIZE: int(1, 500).default(20),
    /**
     * Issue 15, the email plane in its region: the database of the control plane (teams, users, keys,
     * domains, webhooks, suppressions, contacts), one for every region; default DATABASE_URL.
     */
    CONTROL_DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
    /**
     * `region=url` pairs: the database holding each region's email plane (emails, recipients, MIME,
     * events, dispatches, webhook messages); a region not named uses DATABASE_URL, unless the
     * control plane is apart (below: then every other served region must be named). `herald migrate`
     * migrates every database named here and the control database.
     */
    REGION_DATABASE_URLS: regionPairs.pipe(z.record(z.string(), oneUrl(['postgres:', 'postgresql:']))).default({}),
    REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
    REDIS_PREFIX: z.string().max(64).default('herald:'),
    /** A Redis command not answered within this long counts Redis as unreachable (fail fast, no hang). */
    REDIS_COMMAND_TIMEOUT_MS: int(10, 10_000).default(250),
    /**
     * The region whose network holds REDIS_URL (one logical Redis for every region: the
     * idempotency registry, rate limits, quotas). When it is another region than HERALD_REGION,
     * the rate limit and the quota answer a send from what this process knows and count it in
     * Redis behind the answer, asking Redis first only near a limit (libs/limits far-limits.ts).
     * Unset: Redis is near, and every check waits for it.
     */
    REDIS_REGION: regionName.optional(),
    NATS_URL: list(url(['nats:', 'tls:'])).default(['nats://127.0.0.1:4222']),
    NATS_NAMESPACE: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'must be lowercase letters, digits or _')
      .default('herald'),
    NATS_REPLICAS: int(1, 5).default(1),
    /**
     * On a NATS supercluster (one cluster per region, joined by gateways): place each region's
     * streams on the servers tagged `region:<region>`. Off for a single server or one cluster.
     */
    NATS_PLACE_BY_REGION: bool.default(false),
    /**
     * `herald all` only: `region=url|url` pairs, the NATS servers each region's worker and webhooks
     * connect to (on a local supercluster, their own region's); default NATS_URL. A deployment per
     * region gives each its own NATS_URL instead.
     */
    NATS_REGION_URLS: regionPairs
      .pipe(
        z.record(
          z.string(),
          z
            .string()
            .transform((v) => v.split('|').map((u) => u.trim()))
            .pipe(z.array(url(['nats:', 'tls:'])).min(1)),
        ),
      )
      .default({}),
    /** `region=replicas` pairs overriding NATS_REPLICAS for a region's streams, e.g. `us-east-1=3` (a 3-node region). */
    NATS_REGION_REPLICAS: regionPairs
      .pipe(z.record(z.string(), z.string().regex(/^[1-5]$/, 'must be replicas from 1 to 5')))
      .transform((pairs) => Object.fromEntries(Object.entries(pairs).map(([region, n]) => [region, Number(n)])))
      .default({}),

    API_HOST: z.string().default('0.0.0.0'),
    API_PORT: int(0, 65535).default(3000),
    PUBLIC_API_URL: url(['http:', 'https:']).optional(),
    /**
     * A second listener of the api role for the tracking host alone (`/t/o/…`, `/t/c/…`), on
     * API_HOST: the port the ingress sends tracking host names to. None of the REST API's request
     * hooks run there. Unset: none (the tracking routes are on API_PORT, where they always are).
     */
    TRACKING_LISTEN_PORT: int(0, 65535).optional(),
    OPS_PORT: int(0, 65535).default(9464),
    API_BODY_LIMIT_BYTES: int(1024, 200 * 1024 * 1024).default(60 * 1024 * 1024),
    /**
     * The proxies (IPs / CIDRs) whose X-Forwarded-For, -Proto and -Host the api believes: the
     * ingress in front of it. Empty (the default): none, the connection's peer is the client, so
     * no client names its own address to the sign-in limit per address, the audit log or tracking.
     */
    API_TRUSTED_PROXIES: cidrList.default([]),
    /** Requests an API process serves at once; past it a new one gets 503 with Retry-After at once (0: no limit). */
    API_MAX_IN_FLIGHT: int(0, 1_000_000).default(1_000),
    /**
     * The event loop's mean delay (ms, over 250 ms) past which an API process refuses new requests
     * with 503 (0: not watched, the default: on a shared host a neighbour's load trips it, and it is
     * not yet shown to hold the p99 of a CPU-bound burst).
     */
    API_SHED_EVENT_LOOP_DELAY_MS: int(0, 60_000).default(0),

    MAX_EMAIL_BYTES: int(1024, 200 * 1024 * 1024).default(40 * 1024 * 1024),
    MAX_RECIPIENTS: int(1, 1000).default(50),
    MAX_BATCH_SIZE: int(1, 1000).default(100),
    MAX_SCHEDULE_DAYS: int(1, 365).default(30),

    RATE_LIMIT_DEFAULT: int(1, 1_000_000).default(10),
    RATE_LIMIT_PLANS: planNumbers.default({}),
    FREE_DAILY_LIMIT: int(1, 1_000_000_000).default(100),
    /**
     * While Redis is unreachable, each process enforces rate limits and quotas alone, granting this
     * share of a team's per-second limit and of a day's email budget (1 / processes serving the team
     * keeps the total at the plan's figures).
     */
    LIMITS_FALLBACK_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
    IDEMPOTENCY_TTL_SECONDS: int(60, 7 * 86400).default(86400),
    /**
     * How long an idempotency key stays claimed by a request that neither completes nor abandons
     * it (its process died, or its claim reached Redis only after it gave up): the in-flight
     * marker's deadline, counted from the request's start. A request still running past it is
     * not cut off; Postgres's primary key settles a retry that overtakes it (libs/idempotency).
     */
    IDEMPOTENCY_IN_FLIGHT_SECONDS: int(1, 600).default(10),
    API_KEY_CACHE_SECONDS: int(0, 3600).default(30),

    DISPATCH_GRACE_SECONDS: int(1, 3600).default(30),
    /**
     * How long the answer to an accepted send waits for the broker to ack its send commands. The
     * emails are committed (with their outbox row) before; past this the answer goes out and the
     * outbox relay publishes what was not acked. Bounds the API's latency while NATS is down.
     */
    DISPATCH_WAIT_MS: int(0, 60_000).default(1000),
    RECONCILE_INTERVAL_MS: int(50, 600_000).default(5000),
    RECONCILE_BATCH_SIZE: int(1, 10_000).default(500),
    /** Contacts a broadcast's fan-out turns into emails per transaction (its cursor moves once per chunk). */
    BROADCAST_CHUNK_SIZE: int(1, 5_000).default(1000),
    /** How long an api process holds a broadcast between chunks; another takes it over this long after it dies. */
    BROADCAST_LEASE_SECONDS: int(2, 3_600).default(10),
    /** Records of a CSV import stored and then written per transaction (its cursor moves once per chunk). */
    CONTACT_IMPORT_CHUNK_ROWS: int(1, 10_000).default(1000),
    /** How long an api process holds a contact import between chunks; another takes it over this long after it dies. */
    CONTACT_IMPORT_LEASE_SECONDS: int(2, 3_600).default(10),

    ...mailFields,
    ...dashboardFields,

    DEV_BOOTSTRAP: bool.default(false),
  })
  // Email ids carry their region's 12-bit code (newRegionalId): two regions with one code could not be told apart.
  .refine((c) => new Set(c.HERALD_REGIONS.map(regionIdCode)).size === new Set(c.HERALD_REGIONS).size, {
    path: ['HERALD_REGIONS'],
    message: 'holds two regions whose email ids would look alike (their 12-bit codes in ids are equal); rename one',
  })
  .refine((c) => Object.keys(c.REGION_BOUNCE_HOSTS).every((r) => c.HERALD_REGIONS.includes(r)), {
    path: ['REGION_BOUNCE_HOSTS'],
    message: 'names a region that is not in HERALD_REGIONS',
  })
  .refine((c) => Object.keys(c.REGION_DATABASE_URLS).every((r) => c.HERALD_REGIONS.includes(r)), {
    path: ['REGION_DATABASE_URLS'],
    message: 'names a region that is not in HERALD_REGIONS',
  })
  // With the control plane in a database apart, DATABASE_URL is this region's own email plane (a
  // deployment per region, deploy/README.md). A served region it does not name would have the emails
  // this region's API accepts for it stored here, where its own region's worker never reads them
  // (it reads its own database), and each region's API would put them somewhere else.
  .superRefine((c, ctx) => {
    if (c.CONTROL_DATABASE_URL === undefined || sameUrl(c.CONTROL_DATABASE_URL, c.DATABASE_URL)) return;
    const unnamed = c.HERALD_REGIONS.filter((r) => r !== c.HERALD_REGION && c.REGION_DATABASE_URLS[r] === undefined);
    if (unnamed.length === 0) return;
    ctx.addIssue({
      code: 'custom',
      path: ['REGION_DATABASE_URLS'],
      message:
        `names no database for ${unnamed.join(', ')} (served: HERALD_REGIONS). With CONTROL_DATABASE_URL apart, DATABASE_URL is ` +
        `${c.HERALD_REGION}'s own email plane, not theirs: name each other served region's database (region=url), or serve fewer regions`,
    });
  })
  .refine((c) => Object.keys(c.NATS_REGION_URLS).every((r) => c.HERALD_REGIONS.includes(r)), {
    path: ['NATS_REGION_URLS'],
    message: 'names a region that is not in HERALD_REGIONS',
  })
  .refine((c) => Object.keys(c.NATS_REGION_REPLICAS).every((r) => c.HERALD_REGIONS.includes(r)), {
    path: ['NATS_REGION_REPLICAS'],
    message: 'names a region that is not in HERALD_REGIONS',
  })
  .refine((c) => Object.keys(c.REGION_SPF).every((r) => c.HERALD_REGIONS.includes(r)), {
    path: ['REGION_SPF'],
    message: 'names a region that is not in HERALD_REGIONS',
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.DKIM_ENCRYPTION_KEY !== undefined, {
    path: ['DKIM_ENCRYPTION_KEY'],
    message: 'is required in production',
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.AUTH_SECRET !== undefined, {
    path: ['AUTH_SECRET'],
    message: 'is required in production',
  })
  .refine((c) => c.NODE_ENV !== 'production' || !c.DEV_BOOTSTRAP, {
    path: ['DEV_BOOTSTRAP'],
    message: 'must be false in production (it creates a development team and a domain marked verified)',
  })
  .refine((c) => (c.SMTP_TLS_CERT === undefined) === (c.SMTP_TLS_KEY === undefined), {
    path: ['SMTP_TLS_CERT'],
    message: 'must be set together with SMTP_TLS_KEY (PEM file paths): both or neither',
  })
  .refine((c) => (c.WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT ?? Infinity) >= c.WEBHOOK_CONCURRENCY_PER_ENDPOINT, {
    path: ['WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT'],
    message: 'must be at least WEBHOOK_CONCURRENCY_PER_ENDPOINT',
  })
  .refine((c) => c.HERALD_REGIONS.includes(c.HERALD_REGION), {
    path: ['HERALD_REGION'],
    message: 'must be one of HERALD_REGIONS',
  });

export type HeraldConfig = z.infer<typeof configSchema>;

/** Two database URLs naming one database (as EmailPlanes and heraldDatabases compare them). */
function sameUrl(a: string, b: string): boolean {
  return new URL(a).href === new URL(b).href;
}
