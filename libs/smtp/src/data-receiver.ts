import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { readMessage, type ReadMessage } from './message-reader';
import { currentPrincipal } from './session-credentials';
import { RELAY_REPLIES, replyError, wireError } from './smtp-replies';
import type { SmtpSubmissionPort } from './submission-port';

export type Warn = (what: string, error: unknown) => void;

export interface ReceiveOptions {
  maxBytes: number;
  spoolAfterBytes?: number;
  submissions: SmtpSubmissionPort;
}

/**
 * One DATA: read it (capped; a large one's rest spooled as it arrives), refuse it for size or
 * line endings, else submit it. What was spooled of a message that is not accepted is discarded.
 */
export async function receive(stream: SMTPServerDataStream, session: SMTPServerSession, options: ReceiveOptions, warn: Warn): Promise<string> {
  const port = options.submissions;
  const openSpool = port.spool && ((head: Buffer) => port.spool!(head));
  const message = await readMessage(stream, options.maxBytes, { openSpool, spoolAfterBytes: options.spoolAfterBytes });
  try {
    return await submitMessage(message, stream, session, options, warn);
  } catch (error) {
    if (message.spool) void message.spool.discard();
    throw error;
  }
}

async function submitMessage(
  message: ReadMessage,
  stream: SMTPServerDataStream,
  session: SMTPServerSession,
  options: ReceiveOptions,
  warn: Warn,
): Promise<string> {
  if (message.raw === null || stream.sizeExceeded) throw wireError(RELAY_REPLIES.tooBig(options.maxBytes));
  if (message.bare === 'LF') throw wireError(RELAY_REPLIES.bareLf);
  if (message.bare === 'CR') throw wireError(RELAY_REPLIES.bareCr);
  const principal = await currentPrincipal(options.submissions, session, warn);
  const envelope = {
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
    rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
  };
  let result;
  try {
    result = await options.submissions.submit(principal, envelope, message.raw, message.spool ?? undefined);
  } catch (error) {
    warn('submitting a message', error);
    throw wireError(RELAY_REPLIES.tryLater);
  }
  if (!result.ok) throw replyError(result.reply);
  return RELAY_REPLIES.accepted(result.id).text;
}
