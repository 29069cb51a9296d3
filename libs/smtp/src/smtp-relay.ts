import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { AuthGuard, DEFAULT_AUTH_LIMITS, type AuthLimits } from './auth-guard';
import { ConnectionGuard, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection-guard';
import { receive, type Warn } from './data-receiver';
import { RELAY_REPLIES, replyError, wireError, type SmtpError } from './smtp-replies';
import { currentPrincipal, isRevoked, principalOf, type RelayUser } from './session-credentials';
import { SessionTimers } from './session-timers';
import { refuseSourceRoutes } from './source-routes';
import type { SmtpSubmissionPort } from './submission-port';

export { DEFAULT_AUTH_LIMITS, type AuthLimits } from './auth-guard';
export { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection-guard';
export { findBare, readMessage, SPOOL_AFTER_BYTES, type ReadMessage } from './message-reader';

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
  /** A message past this size goes on to the submission port's spool as it arrives (SPOOL_AFTER_BYTES by default). */
  spoolAfterBytes?: number;
  /** A client that owes a command this long is disconnected (421). */
  idleTimeoutMs: number;
  /** Any session is closed after this long (421 4.4.2). */
  sessionTimeoutMs: number;
  /** How long `close()` lets busy sessions finish before cutting them (30 s by default). */
  closeTimeoutMs?: number;
  /** Failed AUTHs tolerated per connection and per client address (DEFAULT_AUTH_LIMITS). */
  authLimits?: AuthLimits;
  /** Connections held at once per client address and in all (DEFAULT_CONNECTION_LIMITS); past them, 421 at connect. */
  connectionLimits?: ConnectionLimits;
  submissions: SmtpSubmissionPort;
  logger?: { warn(message: string): void; log?(message: string): void };
}

export interface BoundListener {
  port: number;
  mode: ListenerMode;
}

/**
 * The SMTP relay: one smtp-server per configured port (implicit TLS or STARTTLS), AUTH PLAIN and
 * LOGIN offered only over TLS, each step of the session asked of the submission port. Messages
 * with bare CR or LF (which covers the SMTP smuggling sequences `<LF>.<LF>` and `<LF>.<CR><LF>`:
 * smtp-server ends DATA only at `<CR><LF>.<CR><LF>`, so they arrive here as content) are refused.
 * The session's key is presented again at each MAIL FROM and end of DATA (session-credentials),
 * and failed AUTHs are limited per connection and client address (AuthGuard).
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
    // one guard for every listener: a client address is counted whichever port it tries
    const guard = new AuthGuard(options.authLimits ?? DEFAULT_AUTH_LIMITS);
    const connections = new ConnectionGuard(options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS);
    try {
      for (const spec of options.listeners) {
        const sessions = new SessionTimers(options.sessionTimeoutMs);
        const server = createServer(options, spec.mode, sessions, guard, connections);
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
            if (!connection._handlerPending && !connection._dataStream)
              connection.send(RELAY_REPLIES.shuttingDown.code, RELAY_REPLIES.shuttingDown.text);
          }
          await closed;
          sessions.clear();
        }),
      );
    })();
    return this.closing;
  }
}

const warnFor =
  (options: SmtpRelayOptions): Warn =>
  (what, error) =>
    options.logger?.warn(`SMTP relay: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);

function createServer(
  options: SmtpRelayOptions,
  mode: ListenerMode,
  sessions: SessionTimers,
  guard: AuthGuard,
  connections: ConnectionGuard,
): SMTPServer {
  const port = options.submissions;
  const warn = warnFor(options);
  /**
   * The connection of a session that is to be closed after its current reply, with nothing
   * pipelined after the current command dispatched: smtp-server would otherwise run the next
   * commands (and lines of a message) from within the reply's callback, before the close.
   */
  const ending = (session: SMTPServerSession) => {
    const connection = [...server.connections].find((c) => c.id === session.id);
    if (connection?._parser) connection._parser.isClosed = true;
    return connection;
  };
  /** Answers a command; a session whose key was found revoked is closed after this reply. */
  const answer = (session: SMTPServerSession, callback: (error?: SmtpError | null) => void, error?: SmtpError | null) => {
    const connection = isRevoked(session) ? ending(session) : undefined;
    callback(error);
    connection?.close();
  };
  const server: SMTPServer = new SMTPServer({
    name: options.hostname,
    banner: RELAY_REPLIES.greeting.text,
    secure: mode === 'tls',
    key: options.tls.key,
    cert: options.tls.cert,
    size: options.maxBytes,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    authRequiredMessage: RELAY_REPLIES.authRequired.text,
    socketTimeout: options.idleTimeoutMs,
    closeTimeout: options.closeTimeoutMs,
    // the replies carry their enhanced codes in the text (smtp-server would put its own in front)
    hideENHANCEDSTATUSCODES: true,
    disabledCommands: ['XCLIENT', 'XFORWARD'],
    // clients are applications with API keys: a reverse lookup per connection only adds latency
    disableReverseLookup: true,
    logger: false,
    onConnect(session, callback) {
      const admission = connections.admit(session.id, session.remoteAddress);
      if (admission === 'client-full') return callback(wireError(RELAY_REPLIES.tooManyClientConnections));
      if (admission === 'full') return callback(wireError(RELAY_REPLIES.tooManyConnections));
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
      connections.closed(session.id);
      sessions.closed(session.id);
      guard.closed(session.id);
    },
    onAuth(auth, session, callback) {
      if (auth.method !== 'PLAIN' && auth.method !== 'LOGIN') return callback(wireError(RELAY_REPLIES.unknownAuthMethod));
      // before the key is looked at, so a client over its limit learns nothing more (421 closes)
      if (!guard.admits(session.remoteAddress)) return callback(wireError(RELAY_REPLIES.addressBlocked));
      const username = auth.username ?? '';
      const password = auth.password ?? '';
      port.authenticate(username, password).then(
        (result) => {
          if (result.ok) return callback(null, { user: { username, password, principal: result.principal, revoked: false } satisfies RelayUser });
          // only a permanent refusal counts: a temporary one (454) is Herald's trouble, not the client's
          const connection = result.reply.code >= 500 && guard.failed(session.id, session.remoteAddress) ? ending(session) : undefined;
          callback(replyError(result.reply));
          // as Postfix does at smtpd_hard_error_limit: the refusal, then 421 and the close
          connection?.send(RELAY_REPLIES.tooManyAuthFailures.code, RELAY_REPLIES.tooManyAuthFailures.text);
        },
        (error: unknown) => {
          warn('AUTH', error);
          callback(wireError(RELAY_REPLIES.authTemporary));
        },
      );
    },
    onMailFrom(address, session, callback) {
      if (!session.secure) return callback(wireError(RELAY_REPLIES.startTlsFirst));
      currentPrincipal(port, session, warn)
        .then((principal) =>
          port.checkMailFrom(principal, address.address).catch((error: unknown) => {
            warn('MAIL FROM', error);
            throw wireError(RELAY_REPLIES.tryLater);
          }),
        )
        .then(
          (reply) => answer(session, callback, reply ? replyError(reply) : null),
          (error: SmtpError) => answer(session, callback, error),
        );
    },
    onRcptTo(address, session, callback) {
      const principal = principalOf(session);
      if (!principal) return callback(wireError(RELAY_REPLIES.authRequired));
      port.checkRecipient(principal, address.address, session.envelope.rcptTo.length).then(
        (reply) => callback(reply ? replyError(reply) : undefined),
        (error: unknown) => {
          warn('RCPT TO', error);
          callback(wireError(RELAY_REPLIES.tryLater));
        },
      );
    },
    onData(stream, session, callback) {
      sessions
        .handling(session.id, () => receive(stream, session, options, warn))
        .then(
          (reply) => callback(null, reply),
          (error: SmtpError) => answer(session, callback, error),
        );
    },
  });
  // A client's socket error (a reset mid-DATA) is re-emitted on the server: without a listener
  // it would be an uncaught 'error' and end the process, and every other session with it.
  server.on('error', (error: Error) => options.logger?.warn(`SMTP relay: connection error: ${error.message}`));
  return server;
}

async function listen(server: SMTPServer, host: string, spec: ListenerSpec): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const hint =
        error.code === 'EACCES'
          ? ' (ports below 1024 need root or CAP_NET_BIND_SERVICE)'
          : error.code === 'EADDRINUSE'
            ? ' (another process or listener has it)'
            : '';
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
