import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { createSecureContext, type SecureContext } from 'node:tls';
import { classifyRefusal, parseSmtpReply } from '../bounce-classification';
import type { DeliveryJob, RecipientOutcome, RecipientResult } from '../delivery.types';

export interface AddressPoolOptions {
  /** EHLO name. */
  hostname: string;
  port: number;
  messagesPerConnection: number;
  /** Covers the whole session setup (TCP, greeting, STARTTLS): nodemailer cuts the greeting wait short by it. */
  connectTimeoutMs: number;
  greetingTimeoutMs: number;
  commandTimeoutMs: number;
}

export interface Lease {
  connection: SMTPConnection;
  messages: number;
  idleTimer?: NodeJS.Timeout;
}

/**
 * One transaction's results, and whether it failed because of the destination rather than the
 * message: a 421 (RFC 5321 §3.8: the server is closing the channel) or no reply at all (a
 * timeout, a dropped session). Then `siteFailure` says what happened, for the back-off.
 */
export interface Transaction {
  results: RecipientResult[];
  siteFailure: string | null;
}

/** A pooled connection unused this long is closed, so quiet destinations hold no sockets. */
const IDLE_MS = 10_000;

/**
 * One TLS client context for every outbound connection of the process. Without it each STARTTLS
 * builds an OpenSSL context of its own: ~76 KB of native memory per open connection instead of
 * ~66 KB (1,000 connections to a local TLS server, 2026-11-29), and the context's set-up at
 * every connect. A worker draining a backlog over 500 destinations holds ~1,000 connections.
 */
let clientContext: SecureContext | undefined;
const sharedClientContext = (): SecureContext => (clientContext ??= createSecureContext());

/** nodemailer writes `rejectedErrors` onto the envelope it is given, even when the send fails at DATA. */
type TrackedEnvelope = SMTPConnection.Envelope & { rejectedErrors?: RecipientError[] };
type RecipientError = SMTPConnection.SMTPError & { recipient?: string };

/**
 * Connections to one address of one MX host, reused for up to `messagesPerConnection`
 * transactions. Built on nodemailer's SMTPConnection rather than its pool transport so that a
 * connection failure (try the next address) is told apart from a failure inside a transaction
 * (never resent elsewhere: the server may have the message), and per-recipient replies survive.
 */
export class AddressPool {
  private readonly idle: Lease[] = [];
  private readonly open = new Set<SMTPConnection>();

  constructor(
    private readonly mx: string,
    private readonly address: string,
    private readonly options: AddressPoolOptions,
  ) {}

  /** An idle connection (a secured one if TLS is required), or a new one; rejects on connection failures. */
  async acquire(requireTls: boolean): Promise<Lease> {
    const index = this.idle.findIndex((lease) => lease.connection.secure || !requireTls);
    if (index < 0) return this.connect(requireTls);
    const [lease] = this.idle.splice(index, 1);
    clearTimeout(lease.idleTimer);
    return lease;
  }

  /** One transaction for every recipient of the job; each recipient gets its own outcome. */
  send(lease: Lease, job: DeliveryJob): Promise<Transaction> {
    const envelope: TrackedEnvelope = { from: job.envelopeFrom, to: [...job.recipients] };
    return new Promise((resolve) => {
      // Read before release: a connection released after its last message is closed.
      const tls = lease.connection.secure;
      lease.connection.send(envelope, job.message, (error, info) => {
        this.release(lease, !error);
        if (!error) return resolve({ results: successResults(job, info, this.mx, tls), siteFailure: null });
        resolve({ results: failureResults(job, error, envelope, this.mx), siteFailure: siteFailure(error, this.mx) });
      });
    });
  }

  /** A connection acquired and not used: back to the idle ones, its transaction count unchanged. */
  giveBack(lease: Lease): void {
    if (this.open.has(lease.connection)) this.keepIdle(lease);
  }

  /** QUITs idle connections politely, closing any that do not answer within the command timeout. */
  async close(): Promise<void> {
    const quit = ({ connection, idleTimer }: Lease) =>
      new Promise<void>((resolve) => {
        clearTimeout(idleTimer);
        connection.once('end', resolve);
        connection.quit();
        setTimeout(() => connection.close(), this.options.commandTimeoutMs).unref();
      });
    await Promise.all(this.idle.splice(0).map(quit));
  }

  private release(lease: Lease, healthy: boolean): void {
    lease.messages++;
    // After a failed transaction the session state is uncertain; a fresh connection is cheaper than RSET logic.
    if (!healthy || lease.messages >= this.options.messagesPerConnection || !this.open.has(lease.connection)) {
      lease.connection.quit();
      return;
    }
    this.keepIdle(lease);
  }

  private keepIdle(lease: Lease): void {
    lease.idleTimer = setTimeout(() => this.retire(lease), IDLE_MS).unref();
    this.idle.push(lease);
  }

  private retire(lease: Lease): void {
    const index = this.idle.indexOf(lease);
    if (index >= 0) this.idle.splice(index, 1);
    lease.connection.quit();
  }

  /**
   * Connects to the address itself: nodemailer must not resolve the MX name through the system
   * resolver. STARTTLS is opportunistic unless the job requires it, and certificates are not
   * verified (as most MTAs do without MTA-STS or DANE): unauthenticated TLS still beats plaintext.
   */
  private connect(requireTls: boolean): Promise<Lease> {
    const connection = new SMTPConnection({
      host: this.address,
      port: this.options.port,
      name: this.options.hostname,
      connectionTimeout: this.options.connectTimeoutMs,
      greetingTimeout: this.options.greetingTimeoutMs,
      socketTimeout: this.options.commandTimeoutMs,
      requireTLS: requireTls,
      opportunisticTLS: !requireTls,
      tls: { servername: this.mx, rejectUnauthorized: false, secureContext: sharedClientContext() },
      logger: false,
    });
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve({ connection, messages: 0 });
      };
      // Errors after the handshake also reach the send callback; this listener keeps them from crashing.
      connection.on('error', (error) => settle(error));
      connection.once('end', () => {
        this.open.delete(connection);
        const index = this.idle.findIndex((lease) => lease.connection === connection);
        if (index >= 0) clearTimeout(this.idle.splice(index, 1)[0].idleTimer);
        settle(new Error('Connection closed before the session started'));
      });
      connection.connect((error) => {
        if (!error) this.open.add(connection);
        settle(error);
      });
    });
  }
}

function successResults(job: DeliveryJob, info: SMTPConnection.SentMessageInfo, mx: string, tls: boolean): RecipientResult[] {
  const accepted = new Set(info.accepted.map((address) => address.toLowerCase()));
  const refusals = refusalsByRecipient(info.rejectedErrors);
  return job.recipients.map((recipient) => {
    if (accepted.has(recipient.toLowerCase())) return { recipient, outcome: { kind: 'delivered', response: info.response, mx, tls } };
    const reply = refusals.get(recipient.toLowerCase()) ?? `451 4.3.0 Herald: no reply for ${recipient}`;
    return { recipient, outcome: refusalOutcome(reply, mx) };
  });
}

/**
 * A refused transaction: recipients refused at RCPT keep their own reply; the others share the
 * reply that ended it (MAIL FROM, DATA, or the end of data). No reply at all (a dropped
 * connection or a timeout mid-transaction) defers everyone.
 */
function failureResults(job: DeliveryJob, error: SMTPConnection.SMTPError, envelope: TrackedEnvelope, mx: string): RecipientResult[] {
  if (!error.response || !error.responseCode) {
    const response = `451 4.4.2 ${mx}: ${error.message}`;
    return job.recipients.map((recipient) => ({ recipient, outcome: { kind: 'deferred', response, mx } }));
  }
  const shared = error.response;
  const refusals = refusalsByRecipient((error as { rejectedErrors?: RecipientError[] }).rejectedErrors ?? envelope.rejectedErrors);
  return job.recipients.map((recipient) => ({ recipient, outcome: refusalOutcome(refusals.get(recipient.toLowerCase()) ?? shared, mx) }));
}

/** What a failed transaction says about the destination: nothing, unless it ended in a 421 or without a reply. */
function siteFailure(error: SMTPConnection.SMTPError, mx: string): string | null {
  if (!error.response || !error.responseCode) return `${mx}: ${error.message}`;
  return /^421[ -]/.test(error.response) ? `${mx}: ${error.response}` : null;
}

function refusalsByRecipient(errors: RecipientError[] | undefined): Map<string, string> {
  const replies = (errors ?? []).filter((error) => error.recipient && error.response);
  return new Map(replies.map((error) => [String(error.recipient).toLowerCase(), String(error.response)]));
}

function refusalOutcome(reply: string, mx: string): RecipientOutcome {
  const { code } = parseSmtpReply(reply);
  if (code !== null && code >= 500) return { kind: 'bounced', bounce: classifyRefusal(reply), mx };
  return { kind: 'deferred', response: reply, mx };
}
