import { BaseRpcContext } from '@nestjs/microservices';
import { JsMsg } from '@nats-io/jetstream';

/** What a JetStream handler may know about its message (`@Ctx() ctx: JetStreamContext`). */
export class JetStreamContext extends BaseRpcContext<[JsMsg]> {
  getMessage(): JsMsg {
    return this.args[0];
  }

  getSubject(): string {
    return this.args[0].subject;
  }

  /** 1 on the first delivery; grows with every nak or ack-wait expiry. */
  getDeliveryCount(): number {
    return this.args[0].info.deliveryCount;
  }

  getStreamSequence(): number {
    return this.args[0].seq;
  }

  /** Resets the ack-wait timer, for a handler that legitimately takes longer than ackWaitMs. */
  working(): void {
    this.args[0].working();
  }
}
