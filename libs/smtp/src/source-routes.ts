import type { SMTPServer } from 'smtp-server';
import { RELAY_REPLIES } from './smtp-replies';

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
export function refuseSourceRoutes(server: SMTPServer, sessionId: string): void {
  const connections = (server as unknown as { connections: Set<CommandHandlers> }).connections;
  for (const connection of connections) {
    if (connection.id !== sessionId) continue;
    for (const verb of ['handler_MAIL', 'handler_RCPT'] as const) {
      const original = connection[verb].bind(connection);
      connection[verb] = (command, callback) => {
        if (!SOURCE_ROUTE.test(command.toString('latin1'))) return original(command, callback);
        connection.send(RELAY_REPLIES.sourceRoute.code, RELAY_REPLIES.sourceRoute.text);
        callback();
      };
    }
  }
}
