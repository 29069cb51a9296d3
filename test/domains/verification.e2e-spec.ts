import { Resolver } from 'node:dns/promises';
import { Injectable, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { authenticate, DNSResolver } from 'mailauth';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { DataSource } from 'typeorm';
import { AccountsModule, TeamsService } from '@herald/accounts';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { newId } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import {
  buildDnsRecords,
  carryVerification,
  decryptPrivateKey,
  dkimEncryptionKey,
  Domain,
  DomainRecord,
  DomainsRepository,
  encryptPrivateKey,
  generateDkimKey,
  newSelector,
  NewDkimKey,
  DomainStatusListener,
  DomainVerificationModule,
  DomainVerifier,
  recordHost,
  VerificationScheduler,
} from '@herald/domains';
import { isolatedConfig, IsolatedConfig, TestDnsServer, uniqueSuffix } from '@herald/testing';

@Injectable()
class RecordingListener implements DomainStatusListener {
  readonly changes: { name: string; status: string }[] = [];
  readonly dkimChecks: string[] = [];
  statusChanged(domain: Domain): void {
    this.changes.push({ name: domain.name, status: domain.status });
  }
  dkimKeysChecked(domainId: string): void {
    this.dkimChecks.push(domainId);
  }
}

@Module({ providers: [RecordingListener], exports: [RecordingListener] })
class ListenerModule {}

/** Domain verification against a local authoritative DNS server, and mailauth as the independent judge. */
describe('domain verification (local DNS)', () => {
  let dns: TestDnsServer;
  let isolated: IsolatedConfig;
  let config: HeraldConfig;
  let app: INestApplicationContext;
  let verifier: DomainVerifier;
  let domains: DomainsRepository;
  let listener: RecordingListener;
  let teamId: string;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    isolated = await isolatedConfig({
      DNS_SERVERS: dns.address(),
      DNS_TIMEOUT_MS: '300',
      MAIL_DOMAIN: 'herald.test',
      REGION_SPF: 'us-east-1=ip4:127.0.0.1',
      DOMAIN_RECHECK_INTERVAL_MS: '3600000',
    });
    config = isolated.config;
    @Module({
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        AccountsModule,
        DomainVerificationModule.forRoot({ imports: [ListenerModule], listener: RecordingListener }),
      ],
    })
    class TestModule {}
    VerificationScheduler.pollIntervalMs = 3_600_000; // passes are run by hand below
    app = await NestFactory.createApplicationContext(TestModule, { logger: false });
    verifier = app.get(DomainVerifier);
    domains = new DomainsRepository(app.get(DataSource));
    listener = app.get(RecordingListener);
    teamId = (await app.get(TeamsService).create({ name: 'Acme' })).id;
  });

  afterAll(async () => {
    await app?.close();
    await isolated?.cleanup();
    await dns?.close();
  });

  /** A domain as the domains service makes it: RSA and Ed25519 keys, records from the builder. */
  async function addDomain(): Promise<Domain> {
    const id = newId();
    const encryptionKey = dkimEncryptionKey(config);
    const keys: NewDkimKey[] = [];
    for (const algorithm of ['rsa-sha256', 'ed25519-sha256'] as const) {
      const key = await generateDkimKey(algorithm);
      keys.push({
        id: newId(),
        domainId: id,
        selector: newSelector(algorithm, keys.map((k) => k.selector)),
        algorithm,
        publicKey: key.publicKey,
        privateKeyEncrypted: encryptPrivateKey(key.privateKey, encryptionKey),
        state: 'active',
      });
    }
    const settings = { region: 'us-east-1', customReturnPath: 'send', openTracking: false, clickTracking: false, trackingSubdomain: 'links', tls: 'opportunistic' as const };
    const name = `acme-${uniqueSuffix()}.test`;
    const records = buildDnsRecords(config, settings, keys);
    const domain = await domains.create({ id, teamId, name, ...settings, records }, keys);
    await domains.requestVerification(teamId, id, new Date());
    return domain;
  }

  /** Publishes the domain's records as the customer would. */
  function publish(domain: Domain, records: DomainRecord[] = domain.records): void {
    const byHostAndType = new Map<string, DomainRecord[]>();
    for (const r of records) {
      const key = `${recordHost(r, domain.name)}|${r.type}`;
      byHostAndType.set(key, [...(byHostAndType.get(key) ?? []), r]);
    }
    for (const [key, rs] of byHostAndType) {
      const [host, type] = key.split('|');
      if (type === 'TXT') dns.set(host, 'TXT', rs.map((r) => r.value));
      if (type === 'MX') dns.set(host, 'MX', rs.map((r) => ({ exchange: r.value, priority: r.priority ?? 10 })));
      if (type === 'CNAME') dns.set(host, 'CNAME', rs.map((r) => r.value));
    }
  }

  /** mailauth asks its resolver for MX and A records too, whatever its typing says. */
  const localResolver = (): DNSResolver =>
    ((name: string, rr: string) => {
      const resolver = new Resolver({ timeout: 500, tries: 1 });
      resolver.setServers([dns.address()]);
      return resolver.resolve(name, rr);
    }) as DNSResolver;

  const byPurpose = (records: DomainRecord[], purpose: string, type: string) => records.filter((r) => r.record === purpose && r.type === type);

  it('verifies a domain whose records are all published, and saves and announces it', async () => {
    const domain = await addDomain();
    publish(domain);
    const outcome = await verifier.verify(domain.id);

    expect(outcome).toMatchObject({ previousStatus: 'pending', status: 'verified', changed: true });
    expect(outcome.records.map((r) => [r.record, r.type, r.status])).toEqual([
      ['DKIM', 'TXT', 'verified'],
      ['DKIM', 'TXT', 'verified'],
      ['SPF', 'MX', 'verified'],
      ['SPF', 'TXT', 'verified'],
      ['DMARC', 'TXT', 'verified'],
      ['Tracking', 'CNAME', 'verified'],
    ]);
    expect(outcome.records[0].observed?.[0]).toBe(domain.records[0].value);
    expect(outcome.dmarc).toMatchObject({ present: true, policy: 'none', dkimAligned: true, spfAligned: true });

    const saved = (await domains.getById(domain.id))!;
    expect(saved).toMatchObject({ status: 'verified', records: outcome.records, dmarc: outcome.dmarc });
    expect(saved.verifiedAt).not.toBeNull();
    expect(saved.nextCheckAt!.getTime() - saved.lastCheckedAt!.getTime()).toBeGreaterThan(3_590_000);
    expect((await domains.keys(domain.id)).map((k) => k.dnsStatus)).toEqual(['verified', 'verified']);
    expect(listener.changes).toContainEqual({ name: domain.name, status: 'verified' });
    expect(listener.dkimChecks).toContain(domain.id);
  });

  it('fails the DKIM record of a wrong key and does not verify the domain', async () => {
    const domain = await addDomain();
    const other = await generateDkimKey('rsa-sha256');
    const [rsa] = byPurpose(domain.records, 'DKIM', 'TXT');
    publish(domain, domain.records.map((r) => (r === rsa ? { ...r, value: `v=DKIM1; k=rsa; p=${other.publicKey}` } : r)));
    const outcome = await verifier.verify(domain.id);
    expect(outcome.status).toBe('pending');
    expect(outcome.records[0]).toMatchObject({ status: 'failed', problem: 'DKIM key does not match', observed: [`v=DKIM1; k=rsa; p=${other.publicKey}`] });
    expect((await domains.getById(domain.id))!.status).toBe('pending');
  });

  it('does not verify a domain without its SPF record', async () => {
    const domain = await addDomain();
    publish(domain, domain.records.filter((r) => !(r.record === 'SPF' && r.type === 'TXT')));
    const outcome = await verifier.verify(domain.id);
    expect(outcome.status).toBe('pending');
    expect(byPurpose(outcome.records, 'SPF', 'TXT')[0]).toMatchObject({ status: 'pending', problem: `no TXT record at send.${domain.name}` });
    expect(byPurpose(outcome.records, 'SPF', 'MX')[0]).toMatchObject({ status: 'verified' });
  });

  it('turns a DNS timeout into temporary_failure for a verified domain, which recovers', async () => {
    const domain = await addDomain();
    publish(domain);
    const spfHost = `send.${domain.name}`;
    dns.stall(spfHost);
    expect((await verifier.verify(domain.id)).status).toBe('pending'); // never verified: still waiting
    publish(domain);
    expect((await verifier.verify(domain.id)).status).toBe('verified');

    dns.stall(spfHost);
    const outcome = await verifier.verify(domain.id);
    expect(outcome).toMatchObject({ previousStatus: 'verified', status: 'temporary_failure', changed: true });
    expect(byPurpose(outcome.records, 'SPF', 'TXT')[0]).toMatchObject({ status: 'temporary_failure', problem: expect.stringContaining('DNS lookup failed') });
    const saved = (await domains.getById(domain.id))!;
    expect(saved.status).toBe('temporary_failure');
    expect(saved.nextCheckAt!.getTime() - saved.lastCheckedAt!.getTime()).toBeLessThanOrEqual(5 * 60_000 + 1000);
    expect(listener.changes).toContainEqual({ name: domain.name, status: 'temporary_failure' });

    publish(domain);
    expect((await verifier.verify(domain.id)).status).toBe('verified');
  });

  it('fails a verified domain whose record was removed, and verifies it again once fixed', async () => {
    const domain = await addDomain();
    publish(domain);
    expect((await verifier.verify(domain.id)).status).toBe('verified');

    dns.remove(`send.${domain.name}`, 'MX');
    const outcome = await verifier.verify(domain.id);
    expect(outcome).toMatchObject({ previousStatus: 'verified', status: 'failed', changed: true });
    expect(byPurpose(outcome.records, 'SPF', 'MX')[0]).toMatchObject({ status: 'failed', problem: `no MX record at send.${domain.name}` });
    expect((await domains.getById(domain.id))!).toMatchObject({ status: 'failed' });
    expect(listener.changes).toContainEqual({ name: domain.name, status: 'failed' });

    publish(domain);
    expect((await verifier.verify(domain.id)).status).toBe('verified');
  });

  it('keeps a verified domain verified while a rotation key’s record waits to be published', async () => {
    const domain = await addDomain();
    publish(domain);
    expect((await verifier.verify(domain.id)).status).toBe('verified');

    const fresh = await generateDkimKey('rsa-sha256');
    const keyId = newId();
    const rotated = await domains.modify(
      teamId,
      domain.id,
      (_, keys) => ({
        insertKeys: [
          {
            id: keyId,
            domainId: domain.id,
            selector: newSelector('rsa-sha256', keys.map((k) => k.selector)),
            algorithm: 'rsa-sha256',
            publicKey: fresh.publicKey,
            privateKeyEncrypted: encryptPrivateKey(fresh.privateKey, dkimEncryptionKey(config)),
            state: 'pending',
          },
        ],
      }),
      (d, keys) => carryVerification(d.records, buildDnsRecords(config, d, keys)),
    );
    const pendingRecord = () => (rotated!.domain.records.find((r) => r.dkimKeyId === keyId))!;
    expect(pendingRecord()).toMatchObject({ required: false, status: 'not_started' });

    let outcome = await verifier.verify(domain.id);
    expect(outcome.status).toBe('verified');
    expect(outcome.records.find((r) => r.dkimKeyId === keyId)).toMatchObject({ status: 'pending', problem: expect.stringContaining('NXDOMAIN') });

    publish(rotated!.domain);
    outcome = await verifier.verify(domain.id);
    expect(outcome.records.find((r) => r.dkimKeyId === keyId)).toMatchObject({ status: 'verified' });
    expect((await domains.keys(domain.id)).find((k) => k.id === keyId)).toMatchObject({ state: 'pending', dnsStatus: 'verified' });
    expect(listener.dkimChecks.filter((id) => id === domain.id).length).toBeGreaterThanOrEqual(3);
  });

  it('checks again, rather than overwrite them, when the records are rebuilt during a check', async () => {
    const domain = await addDomain();
    publish(domain);
    dns.stall(`send.${domain.name}`);
    const checking = verifier.verify(domain.id);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const changed = await domains.modify(
      teamId,
      domain.id,
      () => ({ settings: { trackingSubdomain: 'clicks' } }),
      (d, keys) => carryVerification(d.records, buildDnsRecords(config, d, keys)),
    );
    publish(changed!.domain);
    const outcome = await checking;
    expect(outcome.status).toBe('verified');
    expect(outcome.records.find((r) => r.record === 'Tracking')).toMatchObject({ name: 'clicks', status: 'verified' });
    expect((await domains.getById(domain.id))!.records.map((r) => r.name)).toContain('clicks');
  });

  it('inspects without saving, for operators', async () => {
    const domain = await addDomain();
    publish(domain);
    const outcome = await verifier.inspect(domain.id);
    expect(outcome.status).toBe('verified');
    expect((await domains.getById(domain.id))!.status).toBe('pending');
    await expect(verifier.inspect(newId())).rejects.toMatchObject({ code: 'not_found' });
  });

  it('verifies due domains in scheduler passes, each once', async () => {
    const scheduler = app.get(VerificationScheduler);
    await scheduler.runOnce(); // whatever earlier tests left due
    const domain = await addDomain();
    publish(domain);
    expect(await scheduler.runOnce()).toBe(1);
    expect((await domains.getById(domain.id))!.status).toBe('verified');
    expect(await scheduler.runOnce()).toBe(0);
    await domains.requestVerification(teamId, domain.id, new Date());
    expect(await scheduler.runOnce()).toBe(1);
  });

  it('signs mail that mailauth finds DKIM (RSA and Ed25519), SPF and DMARC aligned against that DNS', async () => {
    const domain = await addDomain();
    publish(domain);
    expect((await verifier.verify(domain.id)).status).toBe('verified');

    const encryptionKey = dkimEncryptionKey(config);
    const keys = await domains.keys(domain.id);
    const message = [
      `From: Acme <hello@${domain.name}>`,
      'To: someone@example.net',
      'Subject: Signed by Herald',
      `Message-ID: <${newId()}@${domain.name}>`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello from a verified domain.',
      '',
    ].join('\r\n');
    // Both keys sign (RFC 8463: mail carries the RSA and the Ed25519 signature).
    const signed = await dkimSign(message, {
      canonicalization: 'relaxed/relaxed',
      signatureData: keys.map((key) => ({
        signingDomain: domain.name,
        selector: key.selector,
        privateKey: decryptPrivateKey(key.privateKeyEncrypted, encryptionKey),
        algorithm: key.algorithm,
      })),
    } as unknown as Parameters<typeof dkimSign>[1]); // its typings require a top-level signature; signatureData is the documented list
    expect(signed.errors).toEqual([]);

    const result = await authenticate(signed.signatures + message, {
      ip: '127.0.0.1',
      helo: 'mta.herald.test',
      sender: `bounces+abc@send.${domain.name}`,
      mta: 'mx.example.net',
      disableArc: true,
      disableBimi: true,
      resolver: localResolver(),
    });
    expect(result.dkim.results.map((r) => [r.signingDomain, r.status.result])).toEqual([
      [domain.name, 'pass'],
      [domain.name, 'pass'],
    ]);
    expect(result.spf && result.spf.status.result).toBe('pass');
    expect(result.dmarc && result.dmarc.status.result).toBe('pass');
  });
});
