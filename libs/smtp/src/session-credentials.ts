import type { Principal } from '@herald/accounts';
import type { SMTPServerSession } from 'smtp-server';
import { RELAY_REPLIES, wireError } from './smtp-replies';
import type { SmtpSubmissionPort } from './submission-port';

/** What the relay keeps on `session.user` after a successful AUTH. */
export interface RelayUser {
  username: string;
  /** The API key, kept in this session's memory to be presented again (see currentPrincipal). */
  password: string;
  principal: Principal;
  /** Set once a re-check found the key gone: the session is closed after that reply. */
  revoked: boolean;
}

const userOf = (session: SMTPServerSession): RelayUser | undefined => session.user as RelayUser | undefined;

/** The principal of an authenticated session whose key has not been found revoked, else null. */
export const principalOf = (session: SMTPServerSession): Principal | null => {
  const user = userOf(session);
  return user && !user.revoked ? user.principal : null;
};

export const isRevoked = (session: SMTPServerSession): boolean => userOf(session)?.revoked === true;

/**
 * The session's principal as of now. Its credentials are presented again at each MAIL FROM and
 * each end of DATA, as every API request presents its key, through the same lookup (the API key
 * cache): a key deleted after AUTH stops working in an open session within API_KEY_CACHE_SECONDS
 * (at once in the process that deleted it), as it does for the API. On a warm cache this is a
 * map lookup and a SHA-256. Throws the reply to give: 530 with the session marked revoked (the
 * caller closes it) when the key is no longer valid; 451 when that cannot be told now.
 */
export async function currentPrincipal(
  port: SmtpSubmissionPort,
  session: SMTPServerSession,
  warn: (what: string, error: unknown) => void,
): Promise<Principal> {
  const user = userOf(session);
  if (!user || user.revoked) throw wireError(RELAY_REPLIES.authRequired);
  let result: Awaited<ReturnType<SmtpSubmissionPort['authenticate']>>;
  try {
    result = await port.authenticate(user.username, user.password);
  } catch (error) {
    warn('re-checking the API key', error);
    throw wireError(RELAY_REPLIES.tryLater);
  }
  if (result.ok) {
    user.principal = result.principal;
    return result.principal;
  }
  if (result.reply.code < 500) throw wireError(RELAY_REPLIES.tryLater);
  user.revoked = true;
  throw wireError(RELAY_REPLIES.keyRevoked);
}
