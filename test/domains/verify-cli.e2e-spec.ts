import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { newId } from '@herald/core';
import { dataSourceOptions } from '@herald/database';
import { buildDnsRecords, dkimEncryptionKey, Domain, DomainsRepository, encryptPrivateKey, generateDkimKey, newSelector } from '@herald/domains';
import { isolatedConfig, IsolatedConfig, TestDnsServer, uniqueSuffix } from '@herald/testing';
import { envOf, herald } from '../support/herald-process';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');

/** `herald domain verify NAME`, as an operator runs it, against a local authoritative DNS server. */
describe('herald domain verify', () => {
  let dns: TestDnsServer;
  let isolated: IsolatedConfig;
  let db: DataSource;
  let env: NodeJS.ProcessEnv;
  let domain: Domain;

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    const settings = { DNS_SERVERS: dns.address(), DNS_TIMEOUT_MS: '300', MAIL_DOMAIN: 'herald.test', REGION_SPF: 'us-east-1=ip4:127.0.0.1' };
    isolated = await isolatedConfig(settings);
    env = envOf(isolated.config, settings);
    db = await new DataSource(dataSourceOptions(isolated.config)).initialize();
    const team = await herald(env, 'team', 'create', '--name', 'Acme');

    const id = newId();
    const key = await generateDkimKey('rsa-sha256');
    const keys = [
      {
        id: newId(),
        domainId: id,
        selector: newSelector('rsa-sha256'),
        algorithm: 'rsa-sha256' as const,
        publicKey: key.publicKey,
        privateKeyEncrypted: encryptPrivateKey(key.privateKey, dkimEncryptionKey(isolated.config)),
        state: 'active' as const,
      },
    ];
    const settingsOfDomain = {
      region: 'us-east-1',
      customReturnPath: 'send',
      openTracking: false,
      clickTracking: false,
      trackingSubdomain: null,
      tls: 'opportunistic' as const,
    };
    const records = buildDnsRecords(isolated.config, settingsOfDomain, keys);
    domain = await new DomainsRepository(db).create({ id, teamId: team.id, name: `acme-${uniqueSuffix()}.test`, ...settingsOfDomain, records }, keys);
    const [dkim, mx, spf, dmarc] = records;
    dns
      .set(`${dkim.name}.${domain.name}`, 'TXT', [dkim.value])
      .set(`send.${domain.name}`, 'MX', [{ exchange: mx.value, priority: 10 }])
      .set(`send.${domain.name}`, 'TXT', [spf.value])
      .set(`_dmarc.${domain.name}`, 'TXT', [dmarc.value]);
  });

  afterAll(async () => {
    await db?.destroy();
    await isolated?.cleanup();
    await dns?.close();
  });

  it('shows each record, what DNS answered and the problem, without saving on --dry-run', async () => {
    dns.remove(`send.${domain.name}`, 'MX');
    const report = await herald(env, 'domain', 'verify', domain.name.toUpperCase(), '--dry-run');
    expect(report).toMatchObject({
      object: 'domain_verification',
      domain: domain.name,
      id: domain.id,
      status: 'pending',
      previous_status: 'not_started',
      saved: false,
      next_check_at: null,
      dmarc: { present: true, record: 'v=DMARC1; p=none;', policy: 'none', dkim_aligned: true, spf_aligned: true },
    });
    expect(report.records).toEqual([
      expect.objectContaining({
        record: 'DKIM',
        type: 'TXT',
        expected: domain.records[0].value,
        status: 'verified',
        observed: [domain.records[0].value],
        problem: null,
      }),
      expect.objectContaining({
        record: 'SPF',
        name: 'send',
        host: `send.${domain.name}`,
        type: 'MX',
        expected: 'bounce.us-east-1.herald.test',
        priority: 10,
        status: 'pending',
        observed: [],
        problem: `no MX record at send.${domain.name}`,
      }),
      expect.objectContaining({ record: 'SPF', type: 'TXT', expected: 'v=spf1 ip4:127.0.0.1 ~all', status: 'verified' }),
      expect.objectContaining({ record: 'DMARC', type: 'TXT', required: false, status: 'verified' }),
    ]);
    expect((await new DomainsRepository(db).getById(domain.id))!.status).toBe('not_started');
  });

  it('saves the verification', async () => {
    dns.set(`send.${domain.name}`, 'MX', [{ exchange: 'bounce.us-east-1.herald.test', priority: 10 }]);
    const report = await herald(env, 'domain', 'verify', domain.name);
    expect(report).toMatchObject({ status: 'verified', previous_status: 'not_started', saved: true, next_check_at: expect.any(String) });
    expect((await new DomainsRepository(db).getById(domain.id))!.status).toBe('verified');
  });

  it('exits 1 with a clear message for an unknown domain, or none', () => {
    const unknown = spawnSync(process.execPath, [BIN, 'domain', 'verify', 'nowhere.test'], { env, encoding: 'utf8' });
    expect(unknown.status).toBe(1);
    expect(JSON.parse(unknown.stderr)).toEqual({ error: 'not_found', message: 'Domain nowhere.test not found' });
    const missing = spawnSync(process.execPath, [BIN, 'domain', 'verify'], { env, encoding: 'utf8' });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('domain verify needs a domain name');
  });
});
