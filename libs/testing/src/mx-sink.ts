import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { freePortOn } from './free-port';

/** How the sink answers, switchable while it runs. */
export type SinkBehaviour =
  | 'accept'
  /** TCP accepted, no greeting ever (a tarpit): exercises greeting timeouts. */
  | 'stall'
  /** Every session is refused at the greeting with this reply, then closed, e.g. `421 4.3.2 too busy`. */
  | { greeting: string }
  /** The connection is closed at DATA without a reply. */
  | 'drop'
  /** Every message is answered with this reply at the end of data, e.g. `451 4.7.1 try later`. */
  | { defer: string }
  /** Every message is refused with this reply at the end of data, e.g. `550 5.7.1 no`. */
  | { reject: string }
  /** The first attempt of each sender+recipient pair gets `450 4.2.0 greylisted` at RCPT. */
  | 'greylist'
  /** Accepts, but only this long after the end of data: a transaction that stays in flight. */
  | { delayMs: number }
  /**
   * Takes the data, then withholds the reply to its end until `release()`: transactions held in
   * flight for as long as a test needs, e.g. across a kill of the client.
   */
  | 'hold';

/** A reply to RCPT TO for one address, overriding the behaviour. */
export type RecipientRule = { defer: string } | { reject: string };

export interface SinkMessage {
  envelopeFrom: string;
  recipients: string[];
  raw: Buffer;
  /** STARTTLS was used. */
  secure: boolean;
  /** The EHLO name. */
  clientHostname: string;
  remoteAddress: string;
  receivedAt: number;
}

export interface MxSinkOptions {
  /** A loopback address, e.g. `127.0.0.2`: many sinks share one port on different addresses. */
  host: string;
  port: number;
  /** Offer STARTTLS (with a fixed self-signed certificate); default true. */
  starttls?: boolean;
  /** The name in the greeting and EHLO reply. */
  hostname?: string;
  /** Keep every accepted message in `messages` (default true); benchmarks turn it off and read `received`. */
  keepRaw?: boolean;
  /**
   * Keep each message's bytes in `raw` (default true). Off, a message keeps its envelope and
   * receipt time and an empty `raw`: a long run (the soak: 150,000 messages) then does not hold
   * every message in the test's own heap, whose collections would stall the sinks' answers.
   */
  keepBody?: boolean;
}

const NO_BODY = Buffer.alloc(0);

/** A throwaway self-signed P-256 certificate for `mx.herald.test`: tests do not verify it, neither does the transmitter. */
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxQZaUvn/ooVg/cjE
k+BIjOdAzbrYS8SBpTXz6ooWWiGhRANCAAQZvsVNoeSl0DLWiMgAq2oVmPTFQQNo
1vaubB1pUskOFSmNKlvE1P5gnPYM5WSM5Xd+/3HGMPtQJstazDL6zuAA
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBiTCCAS+gAwIBAgIUV4eqQcJdsG5RkXI4TiahWHtW7iMwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwObXguaGVyYWxkLnRlc3QwIBcNMjYxMTI2MDAzNzI5WhgPMjEy
NjExMDIwMDM3MjlaMBkxFzAVBgNVBAMMDm14LmhlcmFsZC50ZXN0MFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEGb7FTaHkpdAy1ojIAKtqFZj0xUEDaNb2rmwdaVLJ
DhUpjSpbxNT+YJz2DOVkjOV3fv9xxjD7UCbLWswy+s7gAKNTMFEwHQYDVR0OBBYE
FNUsZZ5bTwQ2gSRcZTO4PRupf9joMB8GA1UdIwQYMBaAFNUsZZ5bTwQ2gSRcZTO4
PRupf9joMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgdw/pRUMJ
i5n00a1k1vkehBX6KhCXoO368JzVqH8Wwo4CIQCgp4OXC+AteB6TsXHTuY6V3F+a
6kI52YwZw6QHPLXhRg==
-----END CERTIFICATE-----`;

/** `451 4.7.1 try later` → an error smtp-server sends back verbatim (enhanced codes are not added). */
function replyError(reply: string): Error {
  const match = /^([45]\d\d)\s+(.*)$/s.exec(reply.trim());
  if (!match) throw new Error(`not an SMTP error reply: ${reply}`);
  return Object.assign(new Error(match[2]), { responseCode: Number(match[1]) });
}

/**
 * A local MX for tests and benchmarks (smtp-server): records what it accepts and misbehaves on
 * demand, so the transmitter's handling of real SMTP replies and failures can be asserted.
 */
export class MxSink {
  readonly messages: SinkMessage[] = [];
  /** Accepted messages, counted even when `keepRaw` is off. */
  received = 0;
  /** TCP connections accepted. */
  connections = 0;
  private behaviour: SinkBehaviour = 'accept';
  private readonly rules = new Map<string, RecipientRule>();
  private readonly greylisted = new Set<string>();
  /** When each recipient was first refused by `greylist` (ms since the epoch), by lower-cased address. */
  readonly greylistedAt = new Map<string, number>();
  private readonly sockets = new Map<string, Socket>();
  private readonly waiters = new Set<() => void>();
  /** Transactions that 'hold' keeps waiting for their reply: the connection and how to accept. */
  private readonly held: { connection: string; accept: () => void }[] = [];
  /** Held messages whose client was gone at `release()`: never answered, so never accepted. */
  dropped = 0;

  private constructor(
    private readonly server: SMTPServer,
    private readonly keepRaw: boolean,
    /** The loopback address it listens on (an MX host's A record in tests). */
    readonly host: string,
    private readonly keepBody: boolean,
  ) {}

  static async start(options: MxSinkOptions): Promise<MxSink> {
    let sink: MxSink | null = null;
    const server = new SMTPServer({
      name: options.hostname ?? 'mx.herald.test',
      key: TEST_KEY,
      cert: TEST_CERT,
      hideENHANCEDSTATUSCODES: true,
      // Disabled, not just hidden: a client insisting on STARTTLS must be refused like by a real plaintext MX.
      disabledCommands: options.starttls === false ? ['AUTH', 'STARTTLS'] : ['AUTH'],
      disableReverseLookup: true,
      logger: false,
      closeTimeout: 100,
      onConnect: (session, callback) => sink?.onConnect(callback),
      onRcptTo: (address, session, callback) => callback(sink?.rcptError(session, address.address)),
      onData: (stream, session, callback) => sink?.onData(stream, session, callback),
    });
    sink = new MxSink(server, options.keepRaw ?? true, options.host, options.keepBody ?? true);
    const tracked = sink;
    server.server.on('connection', (socket: Socket) => tracked.track(socket));
    server.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    return sink;
  }

  behave(behaviour: SinkBehaviour): this {
    this.behaviour = behaviour;
    return this;
  }

  /** Transactions held by 'hold', and how many of their clients are still connected. */
  holding(): { held: number; connected: number } {
    return { held: this.held.length, connected: this.held.filter((h) => this.sockets.has(h.connection)).length };
  }

  /**
   * Back to accepting. Each held transaction whose client is still connected is accepted
   * (recorded, then answered); one whose client went away is dropped, as an MX discards a message
   * it never acknowledged: the sender was never told it arrived, and sends it again.
   */
  release(): this {
    this.behaviour = 'accept';
    for (const { connection, accept } of this.held.splice(0)) {
      if (this.sockets.has(connection)) accept();
      else this.dropped++;
    }
    return this;
  }

  /** Back to accepting everything, with nothing recorded: one sink can serve many tests. */
  reset(): this {
    this.behaviour = 'accept';
    this.held.length = 0;
    this.dropped = 0;
    this.rules.clear();
    this.greylisted.clear();
    this.greylistedAt.clear();
    this.messages.length = 0;
    this.received = 0;
    this.connections = 0;
    return this;
  }

  recipientRule(address: string, rule: RecipientRule): this {
    this.rules.set(address.toLowerCase(), rule);
    return this;
  }

  /** Resolves once `count` messages were accepted in all; rejects after `timeoutMs`. */
  async waitForMessages(count: number, timeoutMs: number): Promise<void> {
    if (this.received >= count) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.received < count) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`MxSink: ${this.received} of ${count} messages after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Destroys open sockets first: a stalled session would otherwise hold the server open. */
  async close(): Promise<void> {
    for (const socket of this.sockets.values()) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: Socket): void {
    this.connections++;
    const key = `${socket.remoteAddress}:${socket.remotePort}`;
    this.sockets.set(key, socket);
    socket.once('close', () => this.sockets.delete(key));
  }

  private onConnect(callback: (error?: Error | null) => void): void {
    const behaviour = this.behaviour;
    // Withholding the callback withholds the greeting.
    if (behaviour === 'stall') return;
    callback(typeof behaviour === 'object' && 'greeting' in behaviour ? replyError(behaviour.greeting) : null);
  }

  private rcptError(session: SMTPServerSession, address: string): Error | null {
    const rule = this.rules.get(address.toLowerCase());
    if (rule) return replyError('defer' in rule ? rule.defer : rule.reject);
    if (this.behaviour !== 'greylist') return null;
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const pair = `${from.toLowerCase()} ${address.toLowerCase()}`;
    if (this.greylisted.has(pair)) return null;
    this.greylisted.add(pair);
    this.greylistedAt.set(address.toLowerCase(), Date.now());
    return replyError('450 4.2.0 greylisted, try again later');
  }

  private onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (error?: Error | null) => void): void {
    const behaviour = this.behaviour;
    if (behaviour === 'drop') {
      stream.resume();
      this.sockets.get(`${session.remoteAddress}:${session.remotePort}`)?.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    if (this.keepRaw && this.keepBody) stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    else stream.resume();
    stream.once('end', () => {
      // Read at the end of data: 'hold' holds every reply from the moment it is asked for until `release()`.
      if (this.behaviour === 'hold') {
        const accept = () => {
          this.record(session, chunks);
          callback();
        };
        this.held.push({ connection: `${session.remoteAddress}:${session.remotePort}`, accept });
      } else if (typeof behaviour === 'object' && 'delayMs' in behaviour) {
        setTimeout(() => {
          this.record(session, chunks);
          callback();
        }, behaviour.delayMs);
      } else if (typeof behaviour === 'object' && !('greeting' in behaviour)) {
        callback(replyError('defer' in behaviour ? behaviour.defer : behaviour.reject));
      } else {
        this.record(session, chunks);
        callback();
      }
    });
  }

  private record(session: SMTPServerSession, chunks: Buffer[]): void {
    this.received++;
    if (this.keepRaw) {
      const from = session.envelope.mailFrom;
      this.messages.push({
        envelopeFrom: from ? from.address : '',
        recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        raw: this.keepBody ? Buffer.concat(chunks) : NO_BODY,
        secure: session.secure,
        clientHostname: session.hostNameAppearsAs,
        remoteAddress: session.remoteAddress,
        receivedAt: Date.now(),
      });
    }
    for (const check of [...this.waiters]) check();
  }
}

/** A port free on every one of the given addresses, for sinks that share one MX port. */
export const freeSharedPort = (hosts: string[]): Promise<number> => freePortOn(hosts);
