import { z } from 'zod';
import { bool, cidrList, int, regionPairs, secondsList, smtpPorts } from './config-fields';

/**
 * The settings of the mail plane: the hostnames Herald publishes, DNS, sending domains,
 * tracking, webhooks, metrics, delivery, the bounce MX and the SMTP relay (part of configSchema).
 */
export const mailFields = {
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
   * A hit is answered once it is durable on the region's tracking stream (its consumer records
   * it), or in Postgres when the publish fails; the answer waits for that at most this long.
   */
  TRACKING_RECORD_WAIT_MS: int(0, 10_000).default(250),
  /**
   * While an api process is busy (its event loop at least half busy: answering a burst of hits),
   * its recorder of the tracking stream records nothing and catches up once the burst has passed,
   * for at most this long since it last had nothing waiting; 0: it always records at full pace. At
   * most 25 s: a hit's message must be acked within the stream's 30 s ack wait.
   */
  TRACKING_RECORD_DEFER_MS: int(0, 25_000).default(20_000),

  /** Delay before each webhook attempt (seconds), the first usually 0; its length is the number of attempts. */
  WEBHOOK_RETRY_SCHEDULE: secondsList.default([0, 5, 300, 1800, 7200, 18000, 36000, 36000]),
  /** A webhook attempt must get its 2xx (body included) within this long. */
  WEBHOOK_ATTEMPT_TIMEOUT_MS: int(100, 120_000).default(15_000),
  /** Webhook deliveries in flight per webhooks process. */
  WEBHOOK_CONCURRENCY: int(1, 10_000).default(256),
  /**
   * Per endpoint per process: every endpoint starts with this many requests in flight and never
   * gets fewer; one that keeps up with a backlog (2xx, latency not climbing) is given more, up to
   * WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT (default 64, or WEBHOOK_CONCURRENCY_PER_ENDPOINT when
   * that is higher; set it equal to turn adapting off), and timeouts, 5xx and 429 halve it again.
   */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: int(1, 1000).default(4),
  WEBHOOK_MAX_CONCURRENCY_PER_ENDPOINT: int(1, 10_000).optional(),
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
  /**
   * Jobs waiting per destination. Beyond it, an email whose send command names the destination's
   * domain waits unclaimed on its waitlist (postponed in Postgres, called back when there is
   * room); a job that comes anyway (an unnamed domain) goes back to Postgres unattempted.
   */
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
  /** Connections one smtp process holds at once, every relay port together (and its bounce MX as many again, counted apart); past it, 421 4.3.2 at connect. */
  SMTP_MAX_CONNECTIONS: int(1, 1_000_000).default(1000),
  /** Connections one client address (IPv6: its /64) holds at once; past it, 421 4.7.0 at connect. Behind a proxy that hides client addresses, set it to SMTP_MAX_CONNECTIONS. */
  SMTP_MAX_CONNECTIONS_PER_CLIENT: int(1, 1_000_000).default(100),
};
