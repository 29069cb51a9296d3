import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { HeraldError, isUuid } from '@herald/core';
import { JetStreamPublisher } from './jetstream-publisher';
import { parsePayload } from './payload.schema';
import { RegionAvailability } from './region-availability';
import { sendChunkSubject, sendSubject } from './subjects';
import { BUS_CONFIG, BusConfig } from './bus.config';

/** Most recipient domains a send command names; an email to more names none. */
export const MAX_DOMAIN_HINTS = 20;

/** The dispatch of one email to the sender actors of its region. Postgres holds the email itself. */
export const sendCommandSchema = z.object({
  emailId: z.string().refine(isUuid, 'must be a UUID'),
  teamId: z.string().refine(isUuid, 'must be a UUID'),
  region: z.string().regex(/^[a-z]{2}-[a-z]+-\d$/, 'must look like us-east-1'),
  /** 0 for the first dispatch; each later one (a retry, a lease that ran out) has its own, so dedupe keeps it. */
  generation: z.number().int().min(0).optional(),
  /**
   * The domains of its recipients, a hint: a worker whose queue for one of them is full leaves
   * the command in the stream for later instead of claiming and building the email only to
   * defer it. Absent (an older publisher, too many domains), the email is claimed as it comes.
   */
  domains: z.array(z.string().min(1).max(255)).max(MAX_DOMAIN_HINTS).optional(),
  /** The email was postponed for a full destination queue and is called back: any worker admits it. */
  called: z.literal(true).optional(),
});

export type SendCommand = z.infer<typeof sendCommandSchema>;

/** Most emails one send chunk lists (BROADCAST_CHUNK_SIZE's own bound). */
export const MAX_CHUNK_EMAILS = 5_000;

/**
 * The send commands of many emails of one team and region in one message: a broadcast's chunk,
 * written in one transaction and listed by one dispatch-outbox row. One publish and one stored
 * message instead of one per email (the fan-out's JetStream cost was ~15% of the API's CPU per
 * email, and the NATS server's whole share). A worker handles each email as its own send command
 * (commandsOf) and acks the chunk once every email was claimed or postponed.
 */
export const sendChunkSchema = z.object({
  teamId: z.string().refine(isUuid, 'must be a UUID'),
  region: sendCommandSchema.shape.region,
  emails: z
    .array(z.object({ id: z.string().refine(isUuid, 'must be a UUID'), domains: sendCommandSchema.shape.domains }))
    .min(1)
    .max(MAX_CHUNK_EMAILS),
});

export type SendChunk = z.infer<typeof sendChunkSchema>;

/** The send command of each email of a chunk, in order. */
export const commandsOf = ({ teamId, region, emails }: SendChunk): SendCommand[] =>
  emails.map(({ id, domains }) => ({ emailId: id, teamId, region, ...(domains && { domains }) }));

/** The Nats-Msg-Id of a dispatch: the email id, then `<id>.<generation>` for each later dispatch. */
export const dispatchMsgId = (command: SendCommand): string => (command.generation ? `${command.emailId}.${command.generation}` : command.emailId);

/** The stream's acknowledgement; `duplicate` means the email id was already in the dedupe window. */
export interface PublishResult {
  seq: number;
  duplicate: boolean;
}

export type PublishManyResult = ({ command: SendCommand; ok: true } & PublishResult) | { command: SendCommand; ok: false; error: Error };

/** Enough to keep the broker busy without queueing thousands of pending acks at once. */
const PUBLISH_CONCURRENCY = 256;

/**
 * Publishes send commands to the send stream of the email's region, which may be another
 * region's stream. The email id is the Nats-Msg-Id, so a republish by the reconciler within the
 * duplicate window is stored once.
 */
@Injectable()
export class SendPublisher {
  constructor(
    @Inject(BUS_CONFIG.token) private readonly config: BusConfig,
    private readonly jetstream: JetStreamPublisher,
    private readonly regions: RegionAvailability,
  ) {}

  async publish(cmd: SendCommand): Promise<PublishResult> {
    const command = parsePayload(sendCommandSchema, cmd, 'send command');
    return this.publishTo(command.region, sendSubject, JSON.stringify(command), dispatchMsgId(command));
  }

  /** Publishes a chunk's commands as one message; `msgId` (its dispatch-outbox row) is its Nats-Msg-Id. */
  async publishChunk(input: SendChunk, msgId: string): Promise<PublishResult> {
    const chunk = parsePayload(sendChunkSchema, input, 'send chunk');
    return this.publishTo(chunk.region, sendChunkSubject, JSON.stringify(chunk), msgId);
  }

  private async publishTo(region: string, subject: typeof sendSubject, payload: string, msgId: string): Promise<PublishResult> {
    if (!this.config.HERALD_REGIONS.includes(region)) {
      throw new HeraldError('validation_error', `region "${region}" is not one of ${this.config.HERALD_REGIONS.join(', ')}`);
    }
    try {
      return await this.jetstream.publish(subject(this.config.NATS_NAMESPACE, region), payload, msgId);
    } catch (error) {
      this.regions.publishFailed(region, error);
      throw error;
    }
  }

  /** Publishes concurrently; one result per command, in order. Never throws for a single failure. */
  async publishMany(cmds: SendCommand[]): Promise<PublishManyResult[]> {
    const results = new Array<PublishManyResult>(cmds.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < cmds.length) {
        const i = next++;
        const command = cmds[i];
        try {
          results[i] = { command, ok: true, ...(await this.publish(command)) };
        } catch (error) {
          results[i] = { command, ok: false, error: error instanceof Error ? error : new Error(String(error)) };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PUBLISH_CONCURRENCY, cmds.length) }, worker));
    return results;
  }
}
