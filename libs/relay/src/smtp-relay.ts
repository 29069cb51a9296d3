import type { Principal } from '@herald/accounts';
import type { SmtpReply, SmtpSubmissionPort } from './submission-port';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

export type ListenerMode = 'tls' | 'starttls';

export interface ListenerSpec {
  /** 0 picks a free port (tests). */
  port: number;
  /** `tls`: implicit TLS from the first byte (SMTPS); `starttls`: plaintext until STARTTLS. */
  mode: ListenerMode;
}

export interface SmtpRelayOptions {
  host: string;
  listeners: ListenerSpec[];
  /** Greeting and EHLO name. */
  hostname: string;
  tls: { cert: string; key: string };
  /** Advertised with SIZE; a larger message gets 552 5.3.4. */
  maxBytes: number;
  /** A client that owes a command this long is disconnected (421). */
  idleTimeoutMs: number;
  /** Any session is closed after this long (421 4.4.2). */
  sessionTimeoutMs: number;
  /** How long `close()` lets busy sessions finish before cutting them (30 s by default). */
  closeTimeoutMs?: number;
  submissions: SmtpSubmissionPort;
  logger?: { warn(message: string): void; log?(message: string): void };
}

export interface BoundListener {
  port: number;
  mode: ListenerMode;
}

type SmtpError = Error & { responseCode: number };
const smtpError = (responseCode: number, message: string): SmtpError => Object.assign(new Error(message), { responseCode });
/** `550 5.7.1 text`: smtp-server writes the code, the text carries the enhanced code. */
const replyError = (reply: SmtpReply): SmtpError => smtpError(reply.code, `${reply.enhanced} ${reply.message}`);

/** The replies the relay itself writes (the port's refusals come from the port). */
export const RELAY_REPLIES = {
  authRequired: '5.7.0 Authentication required',
  startTlsFirst: '5.7.0 Must issue a STARTTLS command first',
  authTemporary: '4.7.0 Temporary authentication failure, try again later',
  tryLater: '4.3.0 Temporary failure, try again later',
  sessionTooLong: '4.4.2 Session too long, closing connection',
  shuttingDown: '4.3.2 Service shutting down, try again later',
  bareLf: '5.6.11 Message refused: bare LF line ending (lines must end with CRLF)',
  bareCr: '5.6.11 Message refused: bare CR (lines must end with CRLF)',
  tooBig: (maxBytes: number) => `5.3.4 Message exceeds fixed maximum message size ${maxBytes}`,
  accepted: (id: string) => `2.0.0 OK ${id}`,
} as const;

/** What the relay keeps on `session.user` after a successful AUTH. */
interface RelayUser {
  username: string;
  principal: Principal;
}
const principalOf = (session: SMTPServerSession): Principal | null => (session.user as RelayUser | undefined)?.principal ?? null;

/**
 * The SMTP relay: one smtp-server per configured port (implicit TLS or STARTTLS), AUTH PLAIN and
 * LOGIN offered only over TLS, each step of the session asked of the submission port. Messages
 * with bare CR or LF (which covers the SMTP smuggling sequences `<LF>.<LF>` and `<LF>.<CR><LF>`:
 * smtp-server ends DATA only at `<CR><LF>.<CR><LF>`, so they arrive here as content) are refused.
 */
export class SmtpRelay {
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly servers: { server: SMTPServer; sessions: SessionTimers }[],
    readonly listeners: BoundListener[],
  ) {}

  static async start(options: SmtpRelayOptions): Promise<SmtpRelay> {
    if (options.listeners.length === 0) throw new Error('the SMTP relay needs at least one listener');
    const started: { server: SMTPServer; sessions: SessionTimers }[] = [];
    const bound: BoundListener[] = [];
    try {
      for (const spec of options.listeners) {
        const sessions = new SessionTimers(options.sessionTimeoutMs);
        const server = createServer(options, spec.mode, sessions);
        sessions.server = server;
        started.push({ server, sessions });
        bound.push({ port: await listen(server, options.host, spec), mode: spec.mode });
      }
    } catch (error) {
      await Promise.all(started.map(({ server }) => closeServer(server)));
      throw error;
    }
    return new SmtpRelay(started, bound);
  }

  /** The first bound port of a mode (useful with port 0). */
  port(mode: ListenerMode): number {
    const listener = this.listeners.find((l) => l.mode === mode);
    if (!listener) throw new Error(`no ${mode} listener is configured`);
    return listener.port;
  }

  /**
   * Stops accepting; idle sessions get 421 at once, a session in the middle of a command or DATA
   * finishes it (its next command gets 421), and stragglers are cut after closeTimeoutMs.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all(
        this.servers.map(async ({ server, sessions }) => {
          const closed = closeServer(server);
          for (const connection of server.connections) {
            if (!connection._handlerPending && !connection._dataStream) connection.send(421, RELAY_REPLIES.shuttingDown);
          }
          await closed;
          sessions.clear();
        }),
      );
    })();
    return this.closing;
  }
}

/** The total-session timer of each open connection of one listener. */
class SessionTimers {
  server: SMTPServer | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Sessions whose DATA is being handled, and the ones that ran out meanwhile. */
  private readonly busy = new Set<string>();
  private readonly expired = new Set<string>();

  constructor(private readonly timeoutMs: number) {}

  open(id: string): void {
    const timer = setTimeout(() => this.expire(id), this.timeoutMs);
    timer.unref();
    this.timers.set(id, timer);
  }

  closed(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.busy.delete(id);
    this.expired.delete(id);
  }

  /** Runs a DATA handler; a session that ran out meanwhile is closed right after its reply. */
  async handling<T>(id: string, work: () => Promise<T>): Promise<T> {
    this.busy.add(id);
    try {
      return await work();
    } finally {
      this.busy.delete(id);
      // after the reply: smtp-server writes it when the callback of onData runs
      if (this.expired.delete(id)) setImmediate(() => this.kick(id));
    }
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private expire(id: string): void {
    this.timers.delete(id);
    if (this.busy.has(id)) this.expired.add(id);
    else this.kick(id);
  }

  private kick(id: string): void {
    for (const connection of this.server?.connections ?? []) {
      if (connection.id === id) connection.send(421, RELAY_REPLIES.sessionTooLong); // 421 closes it
    }
  }
}

function createServer(options: SmtpRelayOptions, mode: ListenerMode, sessions: SessionTimers): SMTPServer {
  const port = options.submissions;
  const warn = (what: string, error: unknown) =>
    options.logger?.warn(`SMTP relay: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
  const server: SMTPServer = new SMTPServer({
    name: options.hostname,
    banner: 'Herald SMTP relay',
    secure: mode === 'tls',
    key: options.tls.key,
    cert: options.tls.cert,
    size: options.maxBytes,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    authRequiredMessage: RELAY_REPLIES.authRequired,
    socketTimeout: options.idleTimeoutMs,
    closeTimeout: options.closeTimeoutMs,
    // the replies carry their enhanced codes in the text (smtp-server would put its own in front)
    hideENHANCEDSTATUSCODES: true,
    disabledCommands: ['XCLIENT', 'XFORWARD'],
    // clients are applications with API keys: a reverse lookup per connection only adds latency
    disableReverseLookup: true,
    logger: false,
    onConnect(session, callback) {
      sessions.open(session.id);
      refuseSourceRoutes(server, session.id);
      // RFC 4954 §4: no AUTH in the clear. smtp-server advertises AUTH whatever the socket, so
      // AUTH is not a command of this session until STARTTLS (onSecure) turns it on.
      if (!session.secure) session.disabledCommands = ['AUTH', 'XCLIENT', 'XFORWARD'];
      callback();
    },
    onSecure(_socket, session, callback) {
      session.disabledCommands = undefined;
      callback();
    },
    onClose(session) {
      sessions.closed(session.id);
    },
    onAuth(auth, _session, callback) {
      if (auth.method !== 'PLAIN' && auth.method !== 'LOGIN') return callback(smtpError(504, '5.5.4 Unrecognized authentication type'));
      port.authenticate(auth.username ?? '', auth.password ?? '').then(
        (result) => (result.ok ? callback(null, { user: { username: auth.username ?? '', principal: result.principal } satisfies RelayUser }) : callback(replyError(result.reply))),
        (error: unknown) => {
          warn('AUTH', error);
          callback(smtpError(454, RELAY_REPLIES.authTemporary));
        },
      );
    },
    onMailFrom(address, session, callback) {
      const principal = principalOf(session);
      if (!session.secure) return callback(smtpError(530, RELAY_REPLIES.startTlsFirst));
      if (!principal) return callback(smtpError(530, RELAY_REPLIES.authRequired));
      port.checkMailFrom(principal, address.address).then(
        (reply) => callback(reply ? replyError(reply) : undefined),
        (error: unknown) => {
          warn('MAIL FROM', error);
          callback(smtpError(451, RELAY_REPLIES.tryLater));
        },
      );
    },
    onRcptTo(address, session, callback) {
      const principal = principalOf(session);
      if (!principal) return callback(smtpError(530, RELAY_REPLIES.authRequired));
      port.checkRecipient(principal, address.address, session.envelope.rcptTo.length).then(
        (reply) => callback(reply ? replyError(reply) : undefined),
        (error: unknown) => {
          warn('RCPT TO', error);
          callback(smtpError(451, RELAY_REPLIES.tryLater));
        },
      );
    },
    onData(stream, session, callback) {
      sessions
        .handling(session.id, () => receive(stream, session, options))
        .then(
          (reply) => callback(null, reply),
          (error: SmtpError) => callback(error),
        );
    },
  });
  // A client's socket error (a reset mid-DATA) is re-emitted on the server: without a listener
  // it would be an uncaught 'error' and end the process, and every other session with it.
  server.on('error', (error: Error) => options.logger?.warn(`SMTP relay: connection error: ${error.message}`));
  return server;
}

/** `MAIL FROM:<@a,@b:user@c>` / `RCPT TO:<@a:user@c>`: an address with a source route. */
const SOURCE_ROUTE = /^(MAIL\s+FROM|RCPT\s+TO)\s*:\s*<@/i;

interface CommandHandlers {
  id: string;
  send(code: number, message: string): void;
  handler_MAIL(command: Buffer, callback: () => void): void;
  handler_RCPT(command: Buffer, callback: () => void): void;
}

/**
 * Refuses source routes (`<@relay:user@host>`, RFC 5321 appendix C) with 553 instead of doing
 * what smtp-server does by default, accepting the address and dropping the route: a relay is
 * never asked to route mail through other hosts, and a client that tries is probing for an open
 * relay. smtp-server hands its hooks the address with the route already gone, so the session's
 * command handlers are wrapped to see the command as sent.
 */
function refuseSourceRoutes(server: SMTPServer, sessionId: string): void {
  const connections = (server as unknown as { connections: Set<CommandHandlers> }).connections;
  for (const connection of connections) {
    if (connection.id !== sessionId) continue;
    for (const verb of ['handler_MAIL', 'handler_RCPT'] as const) {
      const original = connection[verb].bind(connection);
      connection[verb] = (command, callback) => {
        if (!SOURCE_ROUTE.test(command.toString('latin1'))) return original(command, callback);
        connection.send(553, '5.1.3 Source routes are not accepted: give the final address only');
        callback();
      };
    }
  }
}

/** One DATA: read it whole (capped), refuse it for size or line endings, else submit it. */
async function receive(stream: SMTPServerDataStream, session: SMTPServerSession, options: SmtpRelayOptions): Promise<string> {
  const message = await readMessage(stream, options.maxBytes);
  if (message.raw === null || stream.sizeExceeded) throw smtpError(552, RELAY_REPLIES.tooBig(options.maxBytes));
  if (message.bare === 'LF') throw smtpError(550, RELAY_REPLIES.bareLf);
  if (message.bare === 'CR') throw smtpError(550, RELAY_REPLIES.bareCr);
  const principal = principalOf(session);
  if (!principal) throw smtpError(530, RELAY_REPLIES.authRequired);
  const envelope = {
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
  };
  let result;
  try {
    result = await options.submissions.submit(principal, envelope, message.raw);
  } catch (error) {
    options.logger?.warn(`SMTP relay: submitting a message failed: ${error instanceof Error ? error.message : String(error)}`);
    throw smtpError(451, RELAY_REPLIES.tryLater);
  }
  if (!result.ok) throw replyError(result.reply);
  return RELAY_REPLIES.accepted(result.id);
}

export interface ReadMessage {
  /** The message as received (dot-unstuffed), or null once it grew past the cap. */
  raw: Buffer | null;
  /** The first line-ending violation: a CR not followed by LF, or an LF not preceded by CR. */
  bare: 'CR' | 'LF' | null;
}

/**
 * Reads a DATA stream to its end (the rest is drained, not kept, once it is over the cap or
 * refused) and finds bare CR / LF across chunk boundaries.
 */
export async function readMessage(stream: AsyncIterable<Buffer>, maxBytes: number): Promise<ReadMessage> {
  const chunks: Buffer[] = [];
  let total = 0;
  let bare: 'CR' | 'LF' | null = null;
  let endsWithCr = false;
  for await (const chunk of stream) {
    total += chunk.length;
    if (bare === null) bare = findBare(chunk, endsWithCr);
    if (chunk.length > 0) endsWithCr = chunk[chunk.length - 1] === 0x0d;
    if (total <= maxBytes && bare === null) chunks.push(chunk);
  }
  if (bare === null && endsWithCr) bare = 'CR';
  return { raw: total > maxBytes ? null : Buffer.concat(chunks, bare === null ? total : undefined), bare };
}

/** The first bare CR or LF of a chunk; `afterCr` says the previous chunk ended with CR. */
export function findBare(chunk: Buffer, afterCr: boolean): 'CR' | 'LF' | null {
  if (chunk.length === 0) return null;
  if (afterCr && chunk[0] !== 0x0a) return 'CR';
  for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) {
    if (i === 0 ? !afterCr : chunk[i - 1] !== 0x0d) return 'LF';
  }
  for (let i = chunk.indexOf(0x0d); i !== -1 && i < chunk.length - 1; i = chunk.indexOf(0x0d, i + 1)) {
    if (chunk[i + 1] !== 0x0a) return 'CR';
  }
  return null;
}

async function listen(server: SMTPServer, host: string, spec: ListenerSpec): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'EACCES' ? ' (ports below 1024 need root or CAP_NET_BIND_SERVICE)' : error.code === 'EADDRINUSE' ? ' (another process or listener has it)' : '';
      reject(new Error(`SMTP relay cannot listen on ${host}:${spec.port} (${spec.mode}): ${error.message}${hint}`));
    };
    server.server.once('error', onError);
    server.listen(spec.port, host, () => {
      server.server.off('error', onError);
      const address = server.server.address();
      resolve(typeof address === 'object' && address ? address.port : spec.port);
    });
  });
}

function closeServer(server: SMTPServer): Promise<void> {
  if (!server.server.listening) return Promise.resolve();
  return new Promise((resolve) => server.close(() => resolve()));
}
