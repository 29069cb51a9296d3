import { commandsOf, JetStreamContext, JetStreamHandler, parsePayload, sendChunkSchema, type SendCommand } from '@herald/bus';
import { Logger } from '@nestjs/common';
import { DeliveryService } from '@herald/delivery';

/** How often a chunk still being claimed resets its ack-wait timer. */
const KEEP_ALIVE_MS = 5_000;

/**
 * A send chunk (a broadcast's emails of one transaction, in one message) → the sender pipeline,
 * each email as its own send command, `concurrency` at a time. The chunk is acked once every
 * email has passed the point where a single command is acked: claimed in Postgres (from then
 * on its lease and the reconciler answer for it), or postponed unclaimed for a full destination
 * queue (a durable delay the relay honours), or found not due. An email that fails before that
 * point leaves the chunk unacked: once the others are through, the handler rejects and the chunk
 * is redelivered, and its emails already claimed or sent are not due any more, so only the rest
 * are handled again.
 */
export class SendChunkHandler implements JetStreamHandler {
  private readonly logger = new Logger(SendChunkHandler.name);

  constructor(
    private readonly delivery: DeliveryService,
    private readonly concurrency: number,
  ) {}

  async handle(payload: unknown, ctx: JetStreamContext): Promise<void> {
    const commands = commandsOf(parsePayload(sendChunkSchema, payload, 'send chunk'));
    let through = 0;
    const passed = () => {
      if (++through === commands.length) ctx.ack();
    };
    const keepAlive = setInterval(() => through < commands.length && ctx.working(), KEEP_ALIVE_MS);
    try {
      let next = 0;
      let failure: unknown;
      const lane = async () => {
        while (next < commands.length) {
          const failed = await this.one(commands[next++]!, passed);
          failure ??= failed;
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, commands.length) }, lane));
      // Not all through means some failed before their claim (even with a rejection carrying no error).
      if (through < commands.length)
        throw failure instanceof Error ? failure : new Error(`${commands.length - through} email(s) of the chunk were not claimed`);
    } finally {
      clearInterval(keepAlive);
    }
  }

  /** One email's command; calls `passed` once it is claimed, postponed or not due. Answers its failure, if any. */
  private async one(command: SendCommand, passed: () => void): Promise<unknown> {
    let claimed = false;
    try {
      await this.delivery.handle(command, () => {
        claimed = true;
        passed();
      });
    } catch (error) {
      if (!claimed) return error;
      // After its claim an email's failure is its lease's to recover, as for a single command.
      this.logger.error(`email ${command.emailId} failed after its claim: ${String(error)}; its claim will run out`);
    }
    if (!claimed) passed();
    return undefined;
  }
}
