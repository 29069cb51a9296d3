import { randomUUID } from 'node:crypto';
import type { CreateEmailOptions } from 'resend';
import { DomainVerifier, VerificationScheduler } from '@herald/domains';
import { TestDnsServer } from '@herald/testing';
import { startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { NatsProbe } from '../support/nats-probe';

/** A DNS record as `GET /domains/:id` lists it: `name` relative to the domain. */
interface ListedRecord {
  record: string;
  name: string;
  type: string;
  value: string;
  status: string;
  priority?: number;
}

/**
 * DNS and sending together, end to end: a domain added with the `resend` SDK is refused as a
 * sender until the records Herald gave are published in a local authoritative DNS server and
 * verified; then it sends; once a record disappears and the domain is checked again it is
 * `failed` and refused, while a DNS timeout (`temporary_failure`) does not stop it.
 */
describe('sending from a domain verified against DNS', () => {
  let dns: TestDnsServer;
  let api: TestApi;
  let nats: NatsProbe;
  let team: TestTeam;
  let verifier: DomainVerifier;
  let scheduler: VerificationScheduler;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    VerificationScheduler.pollIntervalMs = 3_600_000; // passes are run by hand below
    api = await startTestApi({ DNS_SERVERS: dns.address(), DNS_TIMEOUT_MS: '500', DOMAIN_CACHE_MS: '0' });
    nats = await NatsProbe.open(api.config);
    verifier = api.app.get(DomainVerifier);
    scheduler = api.app.get(VerificationScheduler);
    team = await api.team();
  });
  afterAll(async () => {
    await nats?.close();
    await api?.close();
    await dns?.close();
  });

  const emailFrom = (from: string, subject: string): CreateEmailOptions => ({ from, to: 'jane@example.com', subject, text: subject });
  const host = (record: ListedRecord, domain: string) => (record.name === '@' || record.name === '' ? domain : `${record.name}.${domain}`);

  async function records(id: string): Promise<{ status: string; records: ListedRecord[] }> {
    const got = await team.resend.domains.get(id);
    expect(got.error).toBeNull();
    return { status: got.data!.status, records: got.data!.records as unknown as ListedRecord[] };
  }

  /** Publishes the records as a customer would at their DNS host, grouped by name and type. */
  function publish(domain: string, listed: ListedRecord[]): void {
    const groups = new Map<string, ListedRecord[]>();
    for (const r of listed) {
      const key = `${host(r, domain)} ${r.type}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    for (const [key, rs] of groups) {
      const [name, type] = key.split(' ');
      if (type === 'TXT')
        dns.set(
          name,
          'TXT',
          rs.map((r) => r.value),
        ); // a DKIM key is > 255 bytes: the server splits it
      else if (type === 'MX')
        dns.set(
          name,
          'MX',
          rs.map((r) => ({ exchange: r.value, priority: r.priority ?? 10 })),
        );
      else if (type === 'CNAME')
        dns.set(
          name,
          'CNAME',
          rs.map((r) => r.value),
        );
      else throw new Error(`cannot publish a ${type} record`);
    }
  }

  it('refuses a domain until its records verify, sends from it once verified, and refuses it again once a record is removed', async () => {
    const name = `shop-${randomUUID().slice(0, 8)}.example`;
    const created = await team.resend.domains.create({ name });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    const sender = `Shop <orders@${name}>`;

    // Added, records not published: refused.
    const early = await team.resend.emails.send(emailFrom(sender, 'too early'));
    expect(early.error).toEqual({ statusCode: 403, name: 'validation_error', message: expect.stringContaining(name) });

    // The customer publishes exactly what Herald listed and asks for a check; until the check
    // runs the domain is pending and still refused.
    const listed = (await records(id)).records;
    expect(listed.map((r) => [r.record, r.type])).toEqual([
      ['DKIM', 'TXT'],
      ['SPF', 'MX'],
      ['SPF', 'TXT'],
      ['DMARC', 'TXT'],
    ]);
    expect(Buffer.byteLength(listed[0].value)).toBeGreaterThan(255);
    publish(name, listed);
    expect((await team.resend.domains.verify(id)).error).toBeNull();
    expect((await records(id)).status).toBe('pending');
    expect((await team.resend.emails.send(emailFrom(sender, 'still pending'))).error).toMatchObject({
      statusCode: 403,
      message: expect.stringContaining(name),
    });

    // The scheduler's pass checks it against DNS.
    expect(await scheduler.runOnce()).toBeGreaterThanOrEqual(1);
    const verified = await records(id);
    expect(verified.status).toBe('verified');
    expect(verified.records.map((r) => [r.record, r.type, r.status])).toEqual([
      ['DKIM', 'TXT', 'verified'],
      ['SPF', 'MX', 'verified'],
      ['SPF', 'TXT', 'verified'],
      ['DMARC', 'TXT', 'verified'],
    ]);
    expect(dns.queries).toEqual(expect.arrayContaining([`${host(listed[0], name)} TXT`, `${host(listed[2], name)} TXT`]));

    const sent = await team.resend.emails.send(emailFrom(sender, 'verified'));
    expect(sent.error).toBeNull();
    expect((await team.resend.emails.get(sent.data!.id)).data).toMatchObject({ from: sender, last_event: 'queued' });
    expect(await nats.sendCommands(created.data!.region)).toContain(sent.data!.id);

    // The SPF TXT record disappears; the next check fails the domain, and sending stops.
    const spf = listed.find((r) => r.record === 'SPF' && r.type === 'TXT')!;
    dns.remove(host(spf, name), 'TXT');
    expect((await team.resend.domains.verify(id)).error).toBeNull();
    const outcome = await verifier.verify(id);
    expect(outcome).toMatchObject({ previousStatus: 'verified', status: 'failed', changed: true });
    const failed = await records(id);
    expect(failed.status).toBe('failed');
    expect(failed.records.find((r) => r.record === 'SPF' && r.type === 'TXT')).toMatchObject({ status: 'failed' });
    const refused = await team.resend.emails.send(emailFrom(sender, 'after SPF was removed'));
    expect(refused.data).toBeNull();
    expect(refused.error).toEqual({ statusCode: 403, name: 'validation_error', message: expect.stringContaining(name) });
    const batch = await team.resend.batch.send([emailFrom(team.from('ok'), 'ok'), emailFrom(sender, 'after SPF was removed')]);
    expect(batch.error).toEqual({
      statusCode: 403,
      name: 'validation_error',
      message: expect.stringMatching(new RegExp(`^emails\\[1\\]: .*${name}`)),
    });

    // Fixed, checked again: it sends again.
    publish(name, [spf]);
    expect((await verifier.verify(id)).status).toBe('verified');
    expect((await team.resend.emails.send(emailFrom(sender, 'fixed'))).error).toBeNull();
  });

  it('keeps sending from a verified domain whose DNS times out (temporary_failure)', async () => {
    const name = `flaky-${randomUUID().slice(0, 8)}.example`;
    const created = await team.resend.domains.create({ name });
    const id = created.data!.id;
    const listed = (await records(id)).records;
    publish(name, listed);
    expect((await verifier.verify(id)).status).toBe('verified');

    const spf = listed.find((r) => r.record === 'SPF' && r.type === 'TXT')!;
    dns.stall(host(spf, name));
    expect((await verifier.verify(id)).status).toBe('temporary_failure');
    expect((await records(id)).status).toBe('temporary_failure');
    const sent = await team.resend.emails.send(emailFrom(`hello@${name}`, 'through a DNS timeout'));
    expect(sent.error).toBeNull();
    expect(await nats.sendCommands(created.data!.region)).toContain(sent.data!.id);
  });
});
