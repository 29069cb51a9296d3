import type { Principal } from '@herald/accounts';
import {
  generateSelfSigned,
  SmtpRelay,
  type SmtpEnvelope,
  type SmtpRelayOptions,
  type SmtpReply,
  type SmtpSubmissionPort,
  type SubmissionResult,
} from '@herald/smtp';
import { RawSmtpClient } from '@herald/testing';

export const KEY = 'hr_test_good_key';
export const PRINCIPAL = { teamId: 'team-1', keyId: 'key-1', permission: 'full_access', domainId: null } as unknown as Principal;
export const MESSAGE = 'From: App <app@acme.test>\r\nTo: bob@example.com\r\nSubject: hi\r\n\r\nHello Bob.\r\n';
export const INVALID_CREDENTIALS: SmtpReply = { code: 535, enhanced: '5.7.8', message: 'Authentication credentials invalid' };
export const plainAuth = (password: string) => `AUTH PLAIN ${Buffer.from(`\0herald\0${password}`).toString('base64')}`;

/** A submission port that records what the listener asked; `revoked` makes KEY stop working. */
export class FakePort implements SmtpSubmissionPort {
  submits: { principal: Principal; envelope: SmtpEnvelope; raw: Buffer }[] = [];
  rcptCalls: { address: string; accepted: number }[] = [];
  authCalls = 0;
  revoked = false;
  submitResult: () => Promise<SubmissionResult> = async () => ({ ok: true, id: `email-${this.submits.length}` });
  mailFromError: Error | null = null;

  async authenticate(username: string, password: string) {
    this.authCalls++;
    if (username === 'herald' && password === KEY && !this.revoked) return { ok: true as const, principal: PRINCIPAL };
    return { ok: false as const, reply: INVALID_CREDENTIALS };
  }

  async checkMailFrom(_principal: Principal, mailFrom: string): Promise<SmtpReply | null> {
    if (this.mailFromError) throw this.mailFromError;
    return mailFrom.endsWith('@acme.test') ? null : { code: 550, enhanced: '5.7.1', message: `The ${mailFrom.split('@')[1]} domain is not verified` };
  }

  async checkRecipient(_principal: Principal, address: string, accepted: number): Promise<SmtpReply | null> {
    this.rcptCalls.push({ address, accepted });
    return address.startsWith('suppressed@') ? { code: 550, enhanced: '5.1.1', message: 'The address is on the suppression list' } : null;
  }

  async submit(principal: Principal, envelope: SmtpEnvelope, raw: Buffer): Promise<SubmissionResult> {
    this.submits.push({ principal, envelope, raw });
    return this.submitResult();
  }
}

/**
 * Relays on free loopback ports (one STARTTLS and one implicit-TLS listener) and raw clients,
 * all closed by `cleanup()` (call it in afterEach).
 */
export class RelayHarness {
  private tls: { cert: string; key: string } | null = null;
  private readonly relays: SmtpRelay[] = [];
  private readonly clients: RawSmtpClient[] = [];

  async start(port: SmtpSubmissionPort, options: Partial<SmtpRelayOptions> = {}): Promise<SmtpRelay> {
    this.tls ??= await generateSelfSigned('smtp.us-east-1.herald.test');
    const relay = await SmtpRelay.start({
      host: '127.0.0.1',
      listeners: [
        { port: 0, mode: 'starttls' },
        { port: 0, mode: 'tls' },
      ],
      hostname: 'smtp.us-east-1.herald.test',
      tls: this.tls,
      maxBytes: 4096,
      idleTimeoutMs: 10_000,
      sessionTimeoutMs: 60_000,
      closeTimeoutMs: 1000,
      submissions: port,
      ...options,
    });
    this.relays.push(relay);
    return relay;
  }

  async client(relay: SmtpRelay, mode: 'tls' | 'starttls', localAddress?: string): Promise<RawSmtpClient> {
    const c = await RawSmtpClient.connect(relay.port(mode), mode, '127.0.0.1', localAddress);
    this.clients.push(c);
    return c;
  }

  /** A session on the implicit-TLS port that has said EHLO. */
  async greeted(relay: SmtpRelay, localAddress?: string): Promise<RawSmtpClient> {
    const c = await this.client(relay, 'tls', localAddress);
    await c.command('EHLO client.test');
    return c;
  }

  /** An authenticated session on the STARTTLS port. */
  async authenticated(relay: SmtpRelay): Promise<RawSmtpClient> {
    const c = await this.client(relay, 'starttls');
    const reply = await c.login(KEY, { starttls: true });
    if (reply !== '235 Authentication successful') throw new Error(`AUTH failed: ${reply}`);
    return c;
  }

  async cleanup(): Promise<void> {
    for (const c of this.clients.splice(0)) c.destroy();
    await Promise.all(this.relays.splice(0).map((r) => r.close()));
  }
}
