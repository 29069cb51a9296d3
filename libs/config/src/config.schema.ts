import { z } from 'zod';
import { bool, cidrList, int, list, planNumbers, regionName, regionPairs, secondsList, smtpPorts, url } from './config-fields';

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
    REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
    REDIS_PREFIX: z.string().max(64).default('herald:'),
    /** A Redis command not answered within this long counts Redis as unreachable (fail fast, no hang). */
    REDIS_COMMAND_TIMEOUT_MS: int(10, 10_000).default(250),
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
    OPS_PORT: int(0, 65535).default(9464),
    API_BODY_LIMIT_BYTES: int(1024, 200 * 1024 * 1024).default(60 * 1024 * 1024),
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

    /** Base of the hostnames Herald publishes in customers' DNS (bounce MX, SPF include, tracking). */
    MAIL_DOMAIN: z
      .string()
      .regex(/^([a-z0-9-]+\.)+[a-z]{2,}$/, 'must be a lowercase domain name')
      .default('herald.localhost'),
    /** `region=host` pairs: the bounce MX of each region; default `bounce.<region>.<MAIL_DOMAIN>`. */
    REGION_BOUNCE_HOSTS: regionPairs.default({}),
    /** `region=mechanisms` pairs for the SPF record, e.g. `us-east-1=ip4:203.0.113.0/24`; default `include:_spf.<region>.<MAIL_DOMAIN>`. */
    REGION_SPF: regionPairs.default({}),
    /** 32 bytes, base64: encrypts DKIM private keys at rest. Required in production. */
    DKIM_ENCRYPTION_KEY: z
      .string()
      .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
      .optional(),
    /** DNS servers for domain verification and MX lookups (`ip` or `ip:port`); default: the system's. */
    DNS_SERVERS: z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^[0-9a-fA-F:.[\]]+$/, 'must be ip or ip:port')))
      .default([]),
    DNS_TIMEOUT_MS: int(100, 60_000).default(5000),
    /** How often verified domains are checked again, and pending ones while they wait. */
    DOMAIN_RECHECK_INTERVAL_MS: int(1000, 7 * 86400_000).default(6 * 3600_000),
    /** A domain whose records are not seen within this many hours of being added is failed. */
    DOMAIN_VERIFY_WINDOW_HOURS: int(1, 720).default(72),
    /** How long the send path trusts a looked-up sending domain (a failed domain stops within this). */
    DOMAIN_CACHE_MS: int(0, 600_000).default(10_000),

    /**
     * Open and click tracking (domains with open_tracking / click_tracking and a verified tracking
     * CNAME). Keys that sign tracking links: comma-separated, each 32+ bytes base64; the first signs,
     * every one verifies (rotate by putting a new key first, drop the old one once its links may
     * go). Default: one key derived from DKIM_ENCRYPTION_KEY (HKDF, info `herald tracking`).
     */
    TRACKING_KEYS: z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().refine((v) => Buffer.from(v, 'base64').length >= 32, 'must be 32 or more bytes, base64-encoded')).min(1))
      .optional(),
    /** Scheme of tracking links: https in production (TLS terminated for the tracking hosts), http for local use. */
    TRACKING_PROTOCOL: z.enum(['https', 'http']).default('https'),
    /** Port written into tracking links when it is not the scheme's default (local use and tests); none by default. */
    TRACKING_PORT: int(1, 65535).optional(),
    /** A click this soon after its link was signed (at delivery) is a link scanner's, flagged machine. */
    TRACKING_SCANNER_WINDOW_SECONDS: int(0, 3600).default(10),
    /**
     * Addresses of Apple Mail Privacy Protection's image proxy: an open from them is flagged
     * machine (apple_privacy). Apple's own 17.0.0.0/8; its proxy also sends the bare user agent
     * `Mozilla/5.0`, which is flagged wherever it comes from.
     */
    TRACKING_APPLE_PROXY_RANGES: cidrList.default(['17.0.0.0/8']),
    /**
     * Hits are answered at once and recorded in the background; while that writer is behind
     * (Postgres slow or down), each answer waits up to this long for its own hit's commit (back-pressure).
     */
    TRACKING_RECORD_WAIT_MS: int(0, 10_000).default(250),

    /** Delay before each webhook attempt (seconds), the first usually 0; its length is the number of attempts. */
    WEBHOOK_RETRY_SCHEDULE: secondsList.default([0, 5, 300, 1800, 7200, 18000, 36000, 36000]),
    /** A webhook attempt must get its 2xx (body included) within this long. */
    WEBHOOK_ATTEMPT_TIMEOUT_MS: int(100, 120_000).default(15_000),
    /** Webhook deliveries in flight per webhooks process, and per endpoint per process. */
    WEBHOOK_CONCURRENCY: int(1, 10_000).default(256),
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: int(1, 1000).default(4),
    /** Accept and deliver to http:// endpoints (local use); https only when false. */
    WEBHOOK_ALLOW_HTTP: bool.default(false),
    /** An endpoint whose every delivery has failed for this many hours is disabled (Resend: 5 days). */
    WEBHOOK_DISABLE_AFTER_HOURS: int(1, 24 * 365).default(120),
    /** IPs / CIDRs the webhook SSRF guard lets through although private or loopback (e.g. `127.0.0.0/8,::1` in tests). */
    WEBHOOK_ALLOWED_ADDRESSES: cidrList.default([]),
    /**
     * IPs / CIDRs `path` attachments may be downloaded from although private or loopback; empty in
     * production (tests allowlist loopback: `127.0.0.0/8,::1`).
     */
    ATTACHMENT_ALLOWED_ADDRESSES: cidrList.default([]),

    /**
     * The reputation guardrail: a domain whose bounce rate (bounced / sent) or complaint rate
     * (complained / delivered) over the last 24 hours passes its limit is paused for new sends,
     * once it has sent to at least METRICS_GUARDRAIL_MIN_SENT recipients in that window.
     */
    METRICS_GUARDRAIL_BOUNCE_RATE: z.coerce.number().gt(0).max(1).default(0.04),
    METRICS_GUARDRAIL_COMPLAINT_RATE: z.coerce.number().gt(0).max(1).default(0.003),
    METRICS_GUARDRAIL_MIN_SENT: int(1, 100_000_000).default(200),
    /** How long the metrics consumer may hold an event before the stream redelivers it (a crashed consumer's events come back after this). */
    METRICS_ACK_WAIT_MS: int(1000, 600_000).default(30_000),

    /** The TCP port of recipients' MX hosts: 25 on the internet; tests point it at local sinks. */
    DELIVERY_PORT: int(1, 65535).default(25),
    /** The EHLO name of this region's senders; default `mta.<region>.<MAIL_DOMAIN>`. */
    DELIVERY_HOSTNAME: z
      .string()
      .regex(/^([a-z0-9-]+\.)*[a-z0-9-]+$/, 'must be a lowercase host name')
      .optional(),
    /** Delay before each retry of a deferred recipient (seconds); the last one repeats until DELIVERY_EXPIRY_SECONDS. */
    DELIVERY_RETRY_SCHEDULE: secondsList.default([60, 300, 900, 1800, 3600, 7200, 14400]),
    /** A recipient still deferred this long after the email was accepted bounces (Transient). */
    DELIVERY_EXPIRY_SECONDS: int(1, 30 * 86400).default(72 * 3600),
    /**
     * Emails a worker process works on at once (pulled, claimed, prepared, being sent). One waiting
     * for its destination (all connections busy, or backing off) waits in that destination's queue
     * instead, without counting here, so a slow or dead destination cannot take every slot.
     */
    DELIVERY_CONCURRENCY: int(1, 100_000).default(256),
    /** SMTP connections per destination (recipient domains sharing MX hosts share them). */
    DELIVERY_CONNECTIONS_PER_DESTINATION: int(1, 1000).default(10),
    /** Messages sent over one SMTP connection before it is replaced. */
    DELIVERY_MESSAGES_PER_CONNECTION: int(1, 100_000).default(100),
    /** Jobs waiting per destination; beyond this a job goes back to Postgres unattempted, due when the queue should have drained. */
    DELIVERY_QUEUE_PER_DESTINATION: int(1, 1_000_000).default(2000),
    /** Jobs waiting in all of a worker's destination queues; beyond this a waiting job keeps its DELIVERY_CONCURRENCY slot (back-pressure). */
    DELIVERY_QUEUE_PER_WORKER: int(1, 10_000_000).default(10_000),
    /** Bytes of built messages waiting in a worker's destination queues; beyond this, too, a waiting job keeps its slot. */
    DELIVERY_QUEUE_BYTES_PER_WORKER: int(1_048_576, 68_719_476_736).default(256 * 1024 * 1024),
    /** Consecutive failures (refused or timed-out connection, no greeting, a 421, a dropped session) that suspend a destination. */
    DELIVERY_BACKOFF_AFTER_FAILURES: int(1, 1000).default(3),
    /** A suspended destination's mail is deferred without a connection this long, doubling per further suspension up to the max; then one probe. */
    DELIVERY_BACKOFF_INITIAL_MS: int(100, 86_400_000).default(10_000),
    DELIVERY_BACKOFF_MAX_MS: int(100, 86_400_000).default(300_000),
    /**
     * RFC 5321 §4.5.3.2 timeouts (Postfix's smtp_connect_timeout and smtp_helo_timeout): TCP
     * connect, the 220 greeting, each later command's reply. The connect timeout bounds the whole
     * session setup (TCP, greeting, STARTTLS), so a tarpit holds a connection at most that long.
     */
    DELIVERY_CONNECT_TIMEOUT_MS: int(100, 600_000).default(30_000),
    DELIVERY_GREETING_TIMEOUT_MS: int(100, 600_000).default(300_000),
    DELIVERY_COMMAND_TIMEOUT_MS: int(100, 1_200_000).default(300_000),
    /** A worker's claim on the recipients it is sending to; renewed while it lives, so a dead worker's run out within this. */
    DELIVERY_CLAIM_SECONDS: int(3, 86400).default(60),
    /** Recipient domains whose `delivered@`, `bounced@`, `complained@`, `suppressed@` addresses are simulated. */
    TEST_ADDRESS_DOMAINS: z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((p) => p.trim().toLowerCase())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^([a-z0-9-]+\.)+[a-z0-9-]+$/, 'must be a domain name')))
      .default(['herald.test', 'resend.dev']),
    /** The bounce MX (DSNs and complaint reports for Return-Path addresses), served by the smtp role. */
    BOUNCE_MX_PORT: int(0, 65535).default(25),
    BOUNCE_MX_HOST: z.string().default('0.0.0.0'),

    /** The SMTP relay (smtp role): applications send with username `herald` and an API key as password. */
    SMTP_HOST: z.string().default('0.0.0.0'),
    /** Listeners as `port:mode` pairs; `tls` is implicit TLS (SMTPS), `starttls` offers STARTTLS. */
    SMTP_PORTS: smtpPorts.default([
      { port: 25, mode: 'starttls' },
      { port: 465, mode: 'tls' },
      { port: 587, mode: 'starttls' },
      { port: 2465, mode: 'tls' },
      { port: 2587, mode: 'starttls' },
    ]),
    /** Greeting and EHLO name of the relay (and the self-signed certificate's name); default `smtp.<region>.<MAIL_DOMAIN>`. */
    SMTP_HOSTNAME: z
      .string()
      .regex(/^([a-z0-9-]+\.)*[a-z0-9-]+$/, 'must be a lowercase host name')
      .optional(),
    /** PEM files of the relay's certificate (chain) and private key: both or neither; required in production. */
    SMTP_TLS_CERT: z.string().optional(),
    SMTP_TLS_KEY: z.string().optional(),
    /** A session waiting this long for the client's next command is closed (421). */
    SMTP_IDLE_TIMEOUT_MS: int(100, 3_600_000).default(60_000),
    /** A session is closed (421 4.4.2) after this long, whatever it is doing. */
    SMTP_SESSION_TIMEOUT_MS: int(100, 24 * 3_600_000).default(600_000),

    /** Signs dashboard session cookies and tokens (better-auth); 32+ characters; required in production. */
    AUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    /** The dashboard's public origin for links in emails and OAuth redirects; default PUBLIC_API_URL, else the API's own URL. */
    DASHBOARD_URL: url(['http:', 'https:']).optional(),
    /** A dashboard session lasts this long without use (seconds). */
    SESSION_TTL_SECONDS: int(300, 365 * 86400).default(7 * 86400),
    /** Wrong passwords allowed per account, and sign-in attempts per client address, within a minute; more get 429. */
    SIGN_IN_FAILURES_PER_MINUTE: int(1, 10_000).default(10),
    SIGN_IN_ATTEMPTS_PER_ADDRESS_PER_MINUTE: int(1, 100_000).default(30),
    /** Google (OpenID Connect); sign-in with Google is offered when the client id is set. */
    GOOGLE_CLIENT_ID: z.string().min(1).optional(),
    GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
    GOOGLE_DISCOVERY_URL: url(['http:', 'https:']).default('https://accounts.google.com/.well-known/openid-configuration'),
    /** GitHub (OAuth 2 and its user API); offered when the client id is set. */
    GITHUB_CLIENT_ID: z.string().min(1).optional(),
    GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
    GITHUB_AUTHORIZE_URL: url(['http:', 'https:']).default('https://github.com/login/oauth/authorize'),
    GITHUB_TOKEN_URL: url(['http:', 'https:']).default('https://github.com/login/oauth/access_token'),
    GITHUB_API_URL: url(['http:', 'https:']).default('https://api.github.com'),

    DEV_BOOTSTRAP: bool.default(false),
  })
  .refine((c) => Object.keys(c.REGION_BOUNCE_HOSTS).every((r) => c.HERALD_REGIONS.includes(r)), {
    path: ['REGION_BOUNCE_HOSTS'],
    message: 'names a region that is not in HERALD_REGIONS',
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
  .refine((c) => c.HERALD_REGIONS.includes(c.HERALD_REGION), {
    path: ['HERALD_REGION'],
    message: 'must be one of HERALD_REGIONS',
  });

export type HeraldConfig = z.infer<typeof configSchema>;
