import { Resolver } from 'node:dns/promises';
import { authenticate, DNSResolver } from 'mailauth';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { newId } from '@herald/core';
import { decryptPrivateKey, dkimEncryptionKey } from '@herald/domains';
import { startVerificationWorld, type VerificationWorld } from '../support/verification-world';

/** Mail signed with a verified domain's keys, judged by mailauth (an independent implementation) against the local DNS. */
describe('domain verification (local DNS)', () => {
  let world: VerificationWorld;
  let dns: VerificationWorld['dns'];
  let config: VerificationWorld['config'];
  let verifier: VerificationWorld['verifier'];
  let domains: VerificationWorld['domains'];
  const addDomain = () => world.addDomain();
  const publish: VerificationWorld['publish'] = (domain, records) => world.publish(domain, records);

  beforeAll(async () => {
    world = await startVerificationWorld();
    ({ dns, config, verifier, domains } = world);
  });

  afterAll(() => world?.close());

  /** mailauth asks its resolver for MX and A records too, whatever its typing says. */
  const localResolver = (): DNSResolver =>
    ((name: string, rr: string) => {
      const resolver = new Resolver({ timeout: 500, tries: 1 });
      resolver.setServers([dns.address()]);
      return resolver.resolve(name, rr);
    }) as DNSResolver;
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
