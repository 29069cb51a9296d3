import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { HmacSha256Key } from '@herald/core';
import { parseReport, parseReturnPath, type ReceivedReport } from '@herald/delivery';
import { ConnectionGuard, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../connection-guard';
import { BOUNCE_MX_REPLIES as REPLIES, wireError, type SmtpError } from '../smtp-replies';

export interface BounceMxOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Greeting and EHLO name. */
  hostname: string;
  /** Advertised with SIZE; larger messages get 552. */
  maxBytes: number;
  /** The VERP key (see `verpKey`). */
  key: HmacSha256Key;
  /** Connections held at once per client address and in all (the relay's settings, counted apart); past them, 421 at connect. */
  connectionLimits?: ConnectionLimits;
  /** Records the report (LateReports of @herald/delivery); a rejection makes the sender try again later (451). */
  onReport: (report: ReceivedReport) => Promise<void>;
  /**
   * The List-Unsubscribe mailboxes of broadcast emails (`u-…@<return-path domain>`), which share
   * this MX: `accepts` checks the address's signature at RCPT TO, `unsubscribe` acts on a message
   * to it (any content: RFC 2369 asks nothing of it); a rejection makes the sender try again later.
   */
  unsubscribe?: { accepts(address: string): boolean; unsubscribe(address: string): Promise<boolean> };
  logger?: { warn(message: string): void; log?(message: string): void };
}

/**
 * The MX of the Return-Path domains: receives bounces (DSNs) and feedback-loop complaints (ARF)
 * for emails Herald sent. Only VERP addresses with a valid tag are accepted, so the id of every
 * report is known from the envelope and forged reports are refused at RCPT time.
 *
 * No AUTH (senders are other MTAs) and no STARTTLS: bounces carry no secrets worth the
 * certificate management, and senders deliver in plaintext when TLS is not offered.
 */
export class BounceMx {
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(options: BounceMxOptions): Promise<BounceMx> {
    // Open to the whole Internet on port 25: without a bound, one address holding thousands of
    // idle connections would hold the process's memory and descriptors (fault scenario 17).
    const connections = new ConnectionGuard(options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS);
    const server = new SMTPServer({
      name: options.hostname,
      banner: REPLIES.greeting.text,
      size: options.maxBytes,
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      hideSTARTTLS: true,
      // nothing reads the client's name: a PTR query per connection would only add latency, and
      // a DNS query a flood could make Herald send
      disableReverseLookup: true,
      logger: false,
      onConnect(session, callback) {
        const admission = connections.admit(session.id, session.remoteAddress);
        if (admission === 'client-full') return callback(wireError(REPLIES.tooManyClientConnections));
        if (admission === 'full') return callback(wireError(REPLIES.tooManyConnections));
        callback();
      },
      onClose(session) {
        connections.closed(session.id);
      },
      onRcptTo(address, _session, callback) {
        const ours = parseReturnPath(address.address, options.key) !== null || (options.unsubscribe?.accepts(address.address) ?? false);
        callback(ours ? null : wireError(REPLIES.noSuchUser));
      },
      onData(stream, session, callback) {
        receive(stream, session, options).then(
          (reply) => callback(null, reply),
          (error: SmtpError) => callback(error),
        );
      },
    });
    // A client's socket error (a reset mid-DATA) is re-emitted on the server: without a
    // listener it would be an uncaught 'error' and end the process.
    server.on('error', (error: Error) => options.logger?.warn(`bounce MX: connection error: ${error.message}`));
    const port = await new Promise<number>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.server.off('error', reject);
        const address = server.server.address();
        resolve(typeof address === 'object' && address ? address.port : options.port);
      });
    });
    return new BounceMx(server, port);
  }

  /** Stops accepting; waits for open sessions (smtp-server closes stragglers after its timeout). */
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Handles one DATA: parse, hand the report over once per email id, map the outcome to a reply. */
async function receive(stream: SMTPServerDataStream, session: SMTPServerSession, options: BounceMxOptions): Promise<string> {
  const raw = await readCapped(stream, options.maxBytes);
  if (!raw || stream.sizeExceeded) throw wireError(REPLIES.tooBig(options.maxBytes));
  const unsubscribes = session.envelope.rcptTo.filter((rcpt) => parseReturnPath(rcpt.address, options.key) === null);
  if (unsubscribes.length && options.unsubscribe) {
    try {
      for (const rcpt of unsubscribes) await options.unsubscribe.unsubscribe(rcpt.address);
    } catch (error) {
      options.logger?.warn(`Could not unsubscribe for ${session.remoteAddress}: ${error instanceof Error ? error.message : String(error)}`);
      throw wireError(REPLIES.tryLater);
    }
    if (unsubscribes.length === session.envelope.rcptTo.length) return REPLIES.unsubscribed.text;
  }
  const report = await parseReport(raw);
  const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  if (!report) {
    options.logger?.log?.(`Ignored a message from <${envelopeFrom}> (${session.remoteAddress}) that is not a bounce or complaint report.`);
    return REPLIES.notAReport.text;
  }
  const emailIds = new Set(session.envelope.rcptTo.map((rcpt) => parseReturnPath(rcpt.address, options.key)));
  try {
    for (const emailId of emailIds) {
      if (emailId) await options.onReport({ emailId, report, envelopeFrom, remoteAddress: session.remoteAddress });
    }
  } catch (error) {
    options.logger?.warn(
      `Could not record a ${report.kind} report from ${session.remoteAddress}: ${error instanceof Error ? error.message : String(error)}`,
    );
    throw wireError(REPLIES.tryLater);
  }
  return REPLIES.recorded.text;
}

/** The message, or null once it grows past the cap (the rest is drained, not kept). */
async function readCapped(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total <= maxBytes) chunks.push(chunk);
  }
  return total > maxBytes ? null : Buffer.concat(chunks, total);
}
