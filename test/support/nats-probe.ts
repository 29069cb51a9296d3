import { jetstreamManager, JetStreamManager } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { HeraldConfig } from '@herald/config';
import { eventsStreamName, HeraldEvent, parseEvents, sendStreamName } from '@herald/bus';

/** Reads the send and events streams the way an operator would, to check what the API published. */
export class NatsProbe {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly config: HeraldConfig,
  ) {}

  static async open(config: HeraldConfig): Promise<NatsProbe> {
    const nc = await connect({ servers: config.NATS_URL });
    return new NatsProbe(nc, await jetstreamManager(nc), config);
  }

  /** Email ids of the send commands waiting on a region's stream, in stream order. */
  async sendCommands(region: string): Promise<string[]> {
    const stream = sendStreamName(this.config.NATS_NAMESPACE, region);
    const info = await this.jsm.streams.info(stream);
    const ids: string[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const msg = await this.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      // A send command names one email; a send chunk (a broadcast's) lists several.
      const command = msg?.json<{ emailId?: string; emails?: { id: string }[] }>();
      if (command) ids.push(...(command.emails ? command.emails.map((e) => e.id) : [command.emailId!]));
    }
    return ids;
  }

  /** The last message on a region's send stream: its subject, Nats-Msg-Id and payload. */
  async lastSendMessage(region: string): Promise<{ subject: string; msgId: string | undefined; payload: unknown }> {
    const stream = sendStreamName(this.config.NATS_NAMESPACE, region);
    const msg = await this.jsm.streams.getMessage(stream, { seq: (await this.jsm.streams.info(stream)).state.last_seq });
    if (!msg) throw new Error(`the send stream of ${region} is empty`);
    return { subject: msg.subject, msgId: msg.header?.get('Nats-Msg-Id'), payload: msg.json() };
  }

  /** The events on a region's events stream, in stream order (a message of several, in its order), with their subjects. */
  async events(region: string): Promise<(HeraldEvent & { subject: string })[]> {
    const stream = eventsStreamName(this.config.NATS_NAMESPACE, region);
    const info = await this.jsm.streams.info(stream);
    const events: (HeraldEvent & { subject: string })[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const msg = await this.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (msg) events.push(...parseEvents(msg.json()).map((event) => ({ ...event, subject: msg.subject })));
    }
    return events;
  }

  close(): Promise<void> {
    return this.nc.close();
  }
}
