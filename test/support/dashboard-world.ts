import { simpleParser } from 'mailparser';
import { type MxSink } from '@herald/testing';
import { SystemMailer } from '@herald/people';
import { DomainsRepository } from '@herald/domains';
import { call, markVerified } from './api-harness';
import { DashboardClient } from './dashboard-client';
import { DeliveryWorld } from './delivery-world';

/** Where the people of these tests receive their mail. */
export const PEOPLE_DOMAIN = 'people.test';

/**
 * The dashboard's world: Herald's api, worker and smtp roles with a local DNS server (DeliveryWorld),
 * the system team's MAIL_DOMAIN verified with its records published, and an MX sink receiving
 * mail for PEOPLE_DOMAIN, so verification and invitation emails travel through Herald for real.
 */
export class DashboardWorld {
  private constructor(
    readonly delivery: DeliveryWorld,
    readonly inbox: MxSink,
  ) {}

  static async start(overrides: Record<string, string> = {}): Promise<DashboardWorld> {
    const delivery = await DeliveryWorld.start({ MAIL_DOMAIN: 'herald.test', ...overrides });
    const inbox = await delivery.sink();
    delivery.route(PEOPLE_DOMAIN, { host: `mx.${PEOPLE_DOMAIN}`, address: inbox.host });
    const app = delivery.api.app;
    const system = await app.get(SystemMailer).systemSender();
    await markVerified(app.get(DomainsRepository), system.domainId);
    return new DashboardWorld(delivery, inbox);
  }

  get url(): string {
    return this.delivery.api.url;
  }

  async client(): Promise<DashboardClient> {
    return new DashboardClient(this.url).start();
  }

  /** The text of the last message to `address` received within `timeoutMs`, waiting as needed. */
  async mailTo(address: string, subject: RegExp, timeoutMs = 15_000): Promise<{ subject: string; text: string; html: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const message of [...this.inbox.messages].reverse()) {
        if (!message.recipients.includes(address)) continue;
        const parsed = await simpleParser(message.raw);
        if (subject.test(parsed.subject ?? '')) return { subject: parsed.subject ?? '', text: parsed.text ?? '', html: String(parsed.html || '') };
      }
      if (Date.now() > deadline) throw new Error(`no mail to ${address} matching ${subject} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Signs up, follows the emailed link, signs in: a client with a session. */
  async signedIn(email: string, password = 'correct horse battery', extras: Record<string, unknown> = {}): Promise<DashboardClient> {
    const client = await this.client();
    const signUp = await client.auth('/sign-up/email', { email, password, name: email.split('@')[0], ...extras });
    if (signUp.status !== 200) throw new Error(`sign-up answered ${signUp.status}: ${JSON.stringify(signUp.body)}`);
    const link = linkIn((await this.mailTo(email, /Confirm your email/)).text);
    const opened = await client.get(link.replace(this.url, ''));
    if (opened.status >= 400) throw new Error(`verification link answered ${opened.status}`);
    const signIn = await client.auth('/sign-in/email', { email, password });
    if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}: ${JSON.stringify(signIn.body)}`);
    return client;
  }

  /** A REST API key of a team, made as the dashboard would. */
  async restCall(token: string, method: string, path: string, body?: unknown) {
    return call(this.url, token, method, path, body);
  }

  async close(): Promise<void> {
    await this.delivery.close();
  }
}

export function linkIn(text: string): string {
  const match = /https?:\/\/\S+/.exec(text);
  if (!match) throw new Error(`no link in: ${text}`);
  return match[0];
}
