import { newId } from '@herald/core';
import {
  buildDnsRecords,
  carryVerification,
  dkimEncryptionKey,
  DomainRecord,
  encryptPrivateKey,
  generateDkimKey,
  newSelector,
  VerificationScheduler,
} from '@herald/domains';
import { startVerificationWorld, type VerificationWorld } from '../support/verification-world';

/** Domain verification against a local authoritative DNS server (dkim-alignment.e2e-spec.ts has mailauth's judgement). */
describe('domain verification (local DNS)', () => {
  let world: VerificationWorld;
  let dns: VerificationWorld['dns'];
  let config: VerificationWorld['config'];
  let app: VerificationWorld['app'];
  let verifier: VerificationWorld['verifier'];
  let domains: VerificationWorld['domains'];
  let listener: VerificationWorld['listener'];
  let teamId: string;
  const addDomain = () => world.addDomain();
  const publish: VerificationWorld['publish'] = (domain, records) => world.publish(domain, records);

  beforeAll(async () => {
    world = await startVerificationWorld();
    ({ dns, config, app, verifier, domains, listener, teamId } = world);
  });

  afterAll(() => world?.close());

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
    publish(
      domain,
      domain.records.map((r) => (r === rsa ? { ...r, value: `v=DKIM1; k=rsa; p=${other.publicKey}` } : r)),
    );
    const outcome = await verifier.verify(domain.id);
    expect(outcome.status).toBe('pending');
    expect(outcome.records[0]).toMatchObject({
      status: 'failed',
      problem: 'DKIM key does not match',
      observed: [`v=DKIM1; k=rsa; p=${other.publicKey}`],
    });
    expect((await domains.getById(domain.id))!.status).toBe('pending');
  });

  it('does not verify a domain without its SPF record', async () => {
    const domain = await addDomain();
    publish(
      domain,
      domain.records.filter((r) => !(r.record === 'SPF' && r.type === 'TXT')),
    );
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
    expect(byPurpose(outcome.records, 'SPF', 'TXT')[0]).toMatchObject({
      status: 'temporary_failure',
      problem: expect.stringContaining('DNS lookup failed'),
    });
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
            selector: newSelector(
              'rsa-sha256',
              keys.map((k) => k.selector),
            ),
            algorithm: 'rsa-sha256',
            publicKey: fresh.publicKey,
            privateKeyEncrypted: encryptPrivateKey(fresh.privateKey, dkimEncryptionKey(config)),
            state: 'pending',
          },
        ],
      }),
      (d, keys) => carryVerification(d.records, buildDnsRecords(config, d, keys)),
    );
    const pendingRecord = () => rotated!.domain.records.find((r) => r.dkimKeyId === keyId)!;
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
});
