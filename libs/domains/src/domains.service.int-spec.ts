import { createPublicKey, randomUUID, sign, verify } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { Test, TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { BusModule, eventsStreamName, HeraldEvent, NatsService } from '@herald/bus';
import { ConfigModule } from '@herald/config';
import { DatabaseModule } from '@herald/database';
import { IsolatedConfig, isolatedConfig } from '@herald/testing';
import { publicKeySpki } from './dkim-key.crypto';
import type { DkimKey, Domain } from './domain.types';
import { DomainsModule } from './domains.module';
import { DomainsRepository } from './domains.repository';
import { DomainsService } from './domains.service';

/** The service on the machine's Postgres and NATS, for what the HTTP API cannot reach: the key life cycle. */
describe('DomainsService (Postgres, NATS)', () => {
  let isolated: IsolatedConfig;
  let moduleRef: TestingModule;
  let service: DomainsService;
  let repository: DomainsRepository;
  let db: DataSource;
  let acme: string;
  let globex: string;

  const addTeam = async (region = 'us-east-1') => {
    const id = randomUUID();
    await db.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', $2, 'free')`, [id, region]);
    return id;
  };
  const owner = (teamId: string) => ({ teamId, homeRegion: 'us-east-1' });
  const keysOf = (domainId: string) => repository.keys(domainId);
  /** What the verifier does once DNS shows a key's record. */
  const dnsVerified = async (domainId: string, key: DkimKey) => {
    const current = (await repository.getById(domainId))!;
    await repository.saveVerification(domainId, {
      status: current.status,
      records: current.records,
      dmarc: null,
      dkimStatuses: { [key.id]: 'verified' },
      verifiedAt: null,
      nextCheckAt: null,
    });
  };
  const events = async (region: string): Promise<HeraldEvent[]> => {
    const jsm = await moduleRef.get(NatsService).jetstreamManager();
    const stream = eventsStreamName(isolated.config.NATS_NAMESPACE, region);
    const info = await jsm.streams.info(stream);
    const out: HeraldEvent[] = [];
    for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
      const msg = await jsm.streams.getMessage(stream, { seq });
      if (msg) out.push(msg.json());
    }
    return out;
  };

  beforeAll(async () => {
    isolated = await isolatedConfig();
    moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(isolated.config), DatabaseModule, BusModule, DomainsModule],
    }).compile();
    await moduleRef.init();
    service = moduleRef.get(DomainsService);
    repository = moduleRef.get(DomainsRepository);
    db = moduleRef.get(DataSource);
    acme = await addTeam();
    globex = await addTeam();
  });

  afterAll(async () => {
    await moduleRef?.close();
    await isolated?.cleanup();
  });

  it('stores the name in punycode, the keys active and encrypted, and signs with what it publishes', async () => {
    const both = ['rsa-sha256', 'ed25519-sha256'];
    const created = await service.create(owner(acme), { name: 'Bücher-Keys.example', dkim_algorithms: both });
    expect(created.name).toBe(domainToASCII('bücher-keys.example'));
    expect(created.name).toMatch(/^xn--/);
    const keys = await keysOf(created.id);
    expect(keys.map((k) => [k.algorithm, k.state])).toEqual(
      expect.arrayContaining([
        ['rsa-sha256', 'active'],
        ['ed25519-sha256', 'active'],
      ]),
    );
    const [raw] = await db.query(`SELECT string_agg(encode(private_key, 'escape'), '') AS stored FROM dkim_keys WHERE domain_id = $1`, [created.id]);
    expect(raw.stored).not.toContain('PRIVATE KEY');

    const signing = await service.signingKeys(created.id);
    expect(signing).toHaveLength(2);
    for (const key of signing) {
      const stored = keys.find((k) => k.id === key.keyId)!;
      expect(created.records).toContainEqual(expect.objectContaining({ name: `${stored.selector}._domainkey`, type: 'TXT' }));
      const digest = key.algorithm === 'rsa-sha256' ? 'sha256' : null;
      const signature = sign(digest, Buffer.from('headers'), key.privateKey);
      const publicKey = createPublicKey({ key: publicKeySpki(key.algorithm, stored.publicKey), format: 'der', type: 'spki' });
      expect(verify(digest, Buffer.from('headers'), publicKey, signature)).toBe(true);
    }
  });

  it('lets exactly one of concurrent creations of one name win, whichever team asks', async () => {
    const name = `race-${randomUUID().slice(0, 8)}.example`;
    const attempts = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => service.create(owner(i % 2 ? acme : globex), { name: i % 3 ? name : name.toUpperCase() })),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    for (const failed of attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected')) {
      expect(failed.reason).toMatchObject({ code: 'forbidden_from_domain', message: `The domain ${name} has been registered already.` });
    }
  });

  it('rotates a key: pending beside the active one, activated once its record verifies, retired after the grace period', async () => {
    const created = await service.create(owner(acme), { name: 'rotate.example' });
    const [original] = await keysOf(created.id);

    const rotated = await service.rotateDkimKey(acme, created.id);
    const pending = (await keysOf(created.id)).find((k) => k.state === 'pending')!;
    expect(pending.selector).not.toBe(original.selector);
    expect(rotated.records.filter((r) => r.record === 'DKIM').map((r) => [r.name, r.status])).toEqual([
      [`${original.selector}._domainkey`, 'not_started'],
      [`${pending.selector}._domainkey`, 'not_started'],
    ]);
    await expect(service.rotateDkimKey(acme, created.id)).rejects.toMatchObject({ code: 'validation_error' });
    await expect(service.rotateDkimKey(globex, created.id)).rejects.toMatchObject({ code: 'not_found' });

    // Not yet in DNS: signing stays with the original key.
    expect(await service.activateVerifiedKeys(created.id)).toEqual({ activated: [], retiring: [] });
    expect((await service.signingKeys(created.id)).map((k) => k.keyId)).toEqual([original.id]);

    await dnsVerified(created.id, pending);
    expect(await service.activateVerifiedKeys(created.id)).toEqual({ activated: [pending.id], retiring: [original.id] });
    expect((await service.signingKeys(created.id)).map((k) => k.keyId)).toEqual([pending.id]);
    const afterSwitch = (await repository.getById(created.id))!;
    expect(afterSwitch.records.filter((r) => r.record === 'DKIM').map((r) => [r.dkimKeyId, r.required])).toEqual([
      [original.id, false],
      [pending.id, true],
    ]);

    expect(await service.retireKeys(created.id, new Date(Date.now() - 3600_000))).toEqual([]);
    expect(await service.retireKeys(created.id, new Date(Date.now() + 1000))).toEqual([original.id]);
    const retired = (await repository.getById(created.id))!;
    expect(retired.records.filter((r) => r.record === 'DKIM').map((r) => r.dkimKeyId)).toEqual([pending.id]);
    expect((await keysOf(created.id)).map((k) => k.id)).toEqual([pending.id]);

    // The next rotation never reuses a selector, retired ones included.
    await service.rotateDkimKey(acme, created.id);
    const selectors = await repository.selectors(created.id);
    expect(new Set(selectors).size).toBe(3);

    const updates = (await events('us-east-1')).filter((e) => e.type === 'domain.updated' && (e.data as Domain).id === created.id);
    expect(updates).toHaveLength(3); // two rotations and the retirement
  });

  it('serializes concurrent rotations: one starts, the others are told one is in progress', async () => {
    const created = await service.create(owner(acme), { name: 'rotate-race.example' });
    const attempts = await Promise.allSettled(Array.from({ length: 5 }, () => service.rotateDkimKey(acme, created.id)));
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    expect((await keysOf(created.id)).filter((k) => k.state === 'pending')).toHaveLength(1);
  });

  it('keeps what verification found when a PATCH changes the tracking record', async () => {
    const created = await service.create(owner(acme), { name: 'tracking.example', tracking_subdomain: 'links' });
    const stored = (await repository.getById(created.id))!;
    const checked = stored.records.map((r) => ({ ...r, status: 'verified' as const }));
    await repository.saveVerification(created.id, {
      status: 'verified',
      records: checked,
      dmarc: null,
      dkimStatuses: {},
      verifiedAt: new Date(),
      nextCheckAt: null,
    });
    await service.update(acme, created.id, { tracking_subdomain: 'clicks', open_tracking: true });
    const domain = (await repository.getById(created.id))!;
    expect(domain).toMatchObject({ status: 'verified', trackingSubdomain: 'clicks', openTracking: true });
    expect(domain.records.map((r) => [r.record, r.name, r.status])).toEqual([
      ['DKIM', expect.stringMatching(/\._domainkey$/), 'verified'],
      ['SPF', 'send', 'verified'],
      ['SPF', 'send', 'verified'],
      ['DMARC', '_dmarc', 'verified'],
      ['Tracking', 'clicks', 'not_started'],
    ]);
  });
});
