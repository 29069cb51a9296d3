import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { DataSource } from 'typeorm';
import type { WebhookDispatchOptions } from '@herald/webhooks';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { ReceivedDelivery, WebhookReceiver } from './webhook-receiver';

/** The delivery's headers of one family, as the verifiers take them. */
function family(delivery: ReceivedDelivery, prefix: 'webhook' | 'svix'): Record<string, string> {
  return {
    [`${prefix}-id`]: String(delivery.headers[`${prefix}-id`]),
    [`${prefix}-timestamp`]: String(delivery.headers[`${prefix}-timestamp`]),
    [`${prefix}-signature`]: String(delivery.headers[`${prefix}-signature`]),
  };
}

/** Whether the real `standardwebhooks` verifier (webhook-* headers) and the real `svix` one (svix-* headers) both accept it. */
export function verifiesWith(delivery: ReceivedDelivery, secret: string): { standardwebhooks: boolean; svix: boolean } {
  const accepts = (verify: () => unknown) => {
    try {
      verify();
      return true;
    } catch {
      return false;
    }
  };
  return {
    standardwebhooks: accepts(() => new StandardWebhook(secret).verify(delivery.body, family(delivery, 'webhook'))),
    svix: accepts(() => new SvixWebhook(secret).verify(delivery.body, family(delivery, 'svix'))),
  };
}
export const BOTH = { standardwebhooks: true, svix: true };
export const REST_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00$/;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * The webhooks role end to end, for the webhook delivery suites: the API publishes events, the
 * role (in this process, on the same isolated schema and NATS namespace, with a compressed retry
 * schedule) fans them out and POSTs them, signed, to a local receiver.
 */
export class WebhooksWorld {
  /** Every receiver path's signing secrets: each delivery must verify with one of them. */
  readonly secrets = new Map<string, string[]>();
  private pathCount = 0;

  private constructor(
    readonly api: TestApi,
    readonly webhooks: INestApplicationContext,
    readonly receiver: WebhookReceiver,
    readonly db: DataSource,
    readonly nc: NatsConnection,
  ) {}

  /** `dispatch` overrides the dispatcher's options of these suites. */
  static async start(dispatch: Partial<WebhookDispatchOptions> = {}): Promise<WebhooksWorld> {
    const api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8,::1' });
    const webhooks = await startWebhooks(
      api.config,
      {},
      // No attempt here is meant to time out: the hanging-endpoint test counts the requests open at
      // once, which an attempt timed out and retried would inflate on a slow machine.
      { retryScheduleMs: [0, 100, 100, 100, 100, 100, 100, 100], pollIntervalMs: 25, attemptTimeoutMs: 30_000, ...dispatch },
    );
    const receiver = await WebhookReceiver.start();
    const db = api.app.get(DataSource);
    const nc = await connect({ servers: api.config.NATS_URL });
    return new WebhooksWorld(api, webhooks, receiver, db, nc);
  }

  async close(): Promise<void> {
    await this.nc.close();
    await this.receiver.close();
    await this.webhooks.close();
    await this.api.close();
  }

  /** Every delivery received since the last check must verify with one of its path's secrets (after each test). */
  checkSignatures(): void {
    for (const delivery of this.receiver.received.splice(0)) {
      const known = this.secrets.get(delivery.path) ?? [];
      expect({
        path: delivery.path,
        verifies: known.some((secret) => verifiesWith(delivery, secret).standardwebhooks && verifiesWith(delivery, secret).svix),
      }).toEqual({
        path: delivery.path,
        verifies: true,
      });
    }
  }

  /** Receiver paths handed out so far; `nextPath` counts one more. */
  get paths(): number {
    return this.pathCount;
  }

  nextPath(): number {
    return ++this.pathCount;
  }

  /** A new team with a webhook on its own receiver path. */
  async teamWithWebhook(events: string[] = ['domain.created']): Promise<{ team: TestTeam; path: string; id: string; secret: string }> {
    const team = await this.api.team();
    const path = `/hook-${this.nextPath()}`;
    const created = await team.resend.webhooks.create({ endpoint: this.receiver.url(path), events: events as never });
    expect(created.error).toBeNull();
    this.secrets.set(path, [created.data!.signing_secret]);
    return { team, path, id: created.data!.id, secret: created.data!.signing_secret };
  }

  forDomain(path: string, name: string): ReceivedDelivery[] {
    return this.receiver.at(path).filter((d) => d.json.data.name === name);
  }

  async createDomain(team: TestTeam, name = `${randomUUID().slice(0, 8)}.hooks.test`) {
    const created = await team.resend.domains.create({ name });
    expect(created.error).toBeNull();
    return created.data!;
  }

  messagesOf(webhookId: string): Promise<{ id: string; status: string; attempts: number }[]> {
    return this.db.query(`SELECT id, status, attempts FROM webhook_messages WHERE webhook_id = $1`, [webhookId]);
  }
}
