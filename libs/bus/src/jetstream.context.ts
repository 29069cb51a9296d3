import { JsMsg } from '@nats-io/jetstream';

/** What a JetStream handler may know about its message. */
export class JetStreamContext {
  constructor(private readonly message: JsMsg) {}

  getMessage(): JsMsg {
    return this.message;
  }

  getSubject(): string {
    return this.message.subject;
  }

  /** 1 on the first delivery; grows with every nak or ack-wait expiry. */
  getDeliveryCount(): number {
    return this.message.info.deliveryCount;
  }

  getStreamSequence(): number {
    return this.message.seq;
  }

  /**
   * Acknowledges now, before the handler finishes: for a handler that has made the message's
   * work durable elsewhere (a claim in Postgres with its own lease) and takes over its fate, so
   * a long handler neither holds a max-ack-pending slot nor gets redelivered. The transport's
   * settlement when the handler finishes is then a no-op (a message is acked once).
   */
  ack(): void {
    this.message.ack();
  }

  /** Resets the ack-wait timer, for a handler that legitimately takes longer than ackWaitMs. */
  working(): void {
    this.message.working();
  }
}
