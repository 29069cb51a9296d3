import { Injectable, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AccountsModule, TeamsService } from '@herald/accounts';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { newId } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import {
  buildDnsRecords,
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
import { isolatedConfig, TestDnsServer, uniqueSuffix } from '@herald/testing';

@Injectable()
export class RecordingListener implements DomainStatusListener {
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

/**
 * Domain verification on an isolated schema against a local authoritative DNS server, for the
 * domain suites: the verifier, the domains' repository, a listener recording what was announced,
 * and a team to add domains to.
 */
export interface VerificationWorld {
  dns: TestDnsServer;
  config: HeraldConfig;
  app: INestApplicationContext;
  verifier: DomainVerifier;
  domains: DomainsRepository;
  listener: RecordingListener;
  teamId: string;
  /** A domain as the domains service makes it: RSA and Ed25519 keys, records from the builder. */
  addDomain(): Promise<Domain>;
  /** Publishes the domain's records as the customer would. */
  publish(domain: Domain, records?: DomainRecord[]): void;
  close(): Promise<void>;
}

export async function startVerificationWorld(): Promise<VerificationWorld> {
  const dns = await TestDnsServer.start();
  const isolated = await isolatedConfig({
    DNS_SERVERS: dns.address(),
    // Long enough for a busy machine's answer; a stalled record still fails within the test's time.
    DNS_TIMEOUT_MS: '1500',
    MAIL_DOMAIN: 'herald.test',
    REGION_SPF: 'us-east-1=ip4:127.0.0.1',
    DOMAIN_RECHECK_INTERVAL_MS: '3600000',
  });
  const config = isolated.config;
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
  const app = await NestFactory.createApplicationContext(TestModule, { logger: false });
  const verifier = app.get(DomainVerifier);
  const domains = new DomainsRepository(app.get(DataSource));
  const listener = app.get(RecordingListener);
  const teamId = (await app.get(TeamsService).create({ name: 'Acme' })).id;

  async function addDomain(): Promise<Domain> {
    const id = newId();
    const encryptionKey = dkimEncryptionKey(config);
    const keys: NewDkimKey[] = [];
    for (const algorithm of ['rsa-sha256', 'ed25519-sha256'] as const) {
      const key = await generateDkimKey(algorithm);
      keys.push({
        id: newId(),
        domainId: id,
        selector: newSelector(
          algorithm,
          keys.map((k) => k.selector),
        ),
        algorithm,
        publicKey: key.publicKey,
        privateKeyEncrypted: encryptPrivateKey(key.privateKey, encryptionKey),
        state: 'active',
      });
    }
    const settings = {
      region: 'us-east-1',
      customReturnPath: 'send',
      openTracking: false,
      clickTracking: false,
      trackingSubdomain: 'links',
      tls: 'opportunistic' as const,
    };
    const name = `acme-${uniqueSuffix()}.test`;
    const records = buildDnsRecords(config, settings, keys);
    const domain = await domains.create({ id, teamId, name, ...settings, records }, keys);
    await domains.requestVerification(teamId, id, new Date());
    return domain;
  }

  function publish(domain: Domain, records: DomainRecord[] = domain.records): void {
    const byHostAndType = new Map<string, DomainRecord[]>();
    for (const r of records) {
      const key = `${recordHost(r, domain.name)}|${r.type}`;
      byHostAndType.set(key, [...(byHostAndType.get(key) ?? []), r]);
    }
    for (const [key, rs] of byHostAndType) {
      const [host, type] = key.split('|');
      if (type === 'TXT')
        dns.set(
          host,
          'TXT',
          rs.map((r) => r.value),
        );
      if (type === 'MX')
        dns.set(
          host,
          'MX',
          rs.map((r) => ({ exchange: r.value, priority: r.priority ?? 10 })),
        );
      if (type === 'CNAME')
        dns.set(
          host,
          'CNAME',
          rs.map((r) => r.value),
        );
    }
  }

  return {
    dns,
    config,
    app,
    verifier,
    domains,
    listener,
    teamId,
    addDomain,
    publish,
    async close() {
      await app.close();
      await isolated.cleanup();
      await dns.close();
    },
  };
}
