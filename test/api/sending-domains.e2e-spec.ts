import { randomUUID } from 'node:crypto';
import { CreateEmailOptions, Resend } from 'resend';
import { VerificationScheduler } from '@herald/domains';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { DatabaseProbe } from '../support/database-probe';
import { NatsProbe } from '../support/nats-probe';

/** A name no team has added. */
const unknownDomain = (label: string) => `${label}-${randomUUID().slice(0, 8)}.example`;
const emailFrom = (from: string, patch: Partial<CreateEmailOptions> = {}): CreateEmailOptions =>
  ({ from, to: 'jane@example.com', subject: 'Hi', html: '<p>Hi</p>', ...patch }) as CreateEmailOptions;

/** The refusal of a `from` domain: 403 `validation_error`, naming the domain (after `prefix`, for a batch item). */
const refusedDomain = (domain: string, prefix = '') => ({
  statusCode: 403,
  name: 'validation_error',
  message: expect.stringMatching(new RegExp(`^${prefix.replace(/[[\]]/g, '\\$&')}.*${domain.replace(/\./g, '\\.')}`)),
});

/**
 * Sending-domain enforcement on the send path, through the official `resend` SDK: `from` must be
 * on a domain of the team that is verified (or only temporarily unverifiable), a `sending_access`
 * key restricted to a domain sends only from it, and each email goes out from its domain's region.
 * The domains' DNS checks are the domain suites' job (test/domains): here a domain's status is set
 * in Postgres, and the API trusts no cached lookup (DOMAIN_CACHE_MS=0).
 */
describe('sending domains on the send path', () => {
  let api: TestApi;
  let db: DatabaseProbe;
  let nats: NatsProbe;
  let acme: TestTeam;

  beforeAll(async () => {
    VerificationScheduler.pollIntervalMs = 3_600_000; // no background DNS checks of the domains added here
    api = await startTestApi({ DOMAIN_CACHE_MS: '0' });
    db = await DatabaseProbe.open(api.config);
    nats = await NatsProbe.open(api.config);
    acme = await api.team();
  });
  afterAll(async () => {
    await nats?.close();
    await db?.close();
    await api?.close();
  });

  /** Another domain of the team, added through the API and then marked verified. */
  async function addVerifiedDomain(team: TestTeam, label: string, region?: string): Promise<{ id: string; name: string }> {
    const created = await team.resend.domains.create({ name: unknownDomain(label), ...(region && { region: region as 'us-east-1' }) });
    expect(created.error).toBeNull();
    await db.setDomainStatus(created.data!.id, 'verified');
    return { id: created.data!.id, name: created.data!.name };
  }

  describe('who may send from a domain', () => {
    it("sends from the team's verified domain, however the address is cased", async () => {
      const plain = await acme.resend.emails.send(emailFrom(acme.from('hello')));
      expect(plain.error).toBeNull();
      expect(plain.data!.id).toMatch(UUID);
      const shouting = await acme.resend.emails.send(emailFrom(`Acme <HELLO@${acme.domain.toUpperCase()}>`));
      expect(shouting.error).toBeNull();
      expect((await acme.resend.emails.get(shouting.data!.id)).data).toMatchObject({ from: `Acme <HELLO@${acme.domain.toUpperCase()}>` });
    });

    it('refuses a domain the team has not added, with 403 naming it, and stores nothing', async () => {
      const team = await api.team();
      const stranger = unknownDomain('never-added');
      const { data, error } = await team.resend.emails.send(emailFrom(`Acme <hello@${stranger}>`));
      expect(data).toBeNull();
      expect(error).toEqual(refusedDomain(stranger));
      // The raw answer, for the status line the SDK folds into `error`.
      const raw = await call(api.url, team.token, 'POST', '/emails', {
        from: `hello@${stranger}`,
        to: 'jane@example.com',
        subject: 'Hi',
        text: 'Hi',
      });
      expect(raw).toMatchObject({ status: 403, body: refusedDomain(stranger) });
      expect(await db.emailCount(team.teamId)).toBe(0);
    });

    it('refuses a domain added but not verified (not_started, then pending), naming it', async () => {
      const team = await api.team();
      const created = await team.resend.domains.create({ name: unknownDomain('unverified') });
      expect(created.data).toMatchObject({ status: 'not_started' });
      const name = created.data!.name;

      const notStarted = await team.resend.emails.send(emailFrom(`hello@${name}`));
      expect(notStarted.error).toEqual(refusedDomain(name));
      expect(notStarted.error!.message).toContain('not_started');

      expect((await team.resend.domains.verify(created.data!.id)).error).toBeNull();
      expect((await team.resend.domains.get(created.data!.id)).data!.status).toBe('pending');
      const pending = await team.resend.emails.send(emailFrom(`hello@${name}`));
      expect(pending.error).toEqual(refusedDomain(name));
      expect(pending.error!.message).toContain('pending');
      expect(await db.emailCount(team.teamId)).toBe(0);
    });

    it("refuses another team's verified domain", async () => {
      const globex = await api.team();
      const intruder = await api.team();
      const theirs = await intruder.resend.emails.send(emailFrom(globex.from('ceo')));
      expect(theirs.error).toEqual(refusedDomain(globex.domain));
      const batch = await intruder.resend.batch.send([emailFrom(intruder.from('hello')), emailFrom(globex.from('ceo'))]);
      expect(batch.error).toEqual(refusedDomain(globex.domain, 'emails[1]: '));
      expect(await db.emailCount(intruder.teamId)).toBe(0);
      // The owner sends from it, of course.
      expect((await globex.resend.emails.send(emailFrom(globex.from('ceo')))).error).toBeNull();
    });

    it('lets a sending_access key restricted to domain A send from A only, not from the team’s other verified domain B', async () => {
      const team = await api.team();
      const b = await addVerifiedDomain(team, 'second');
      const key = await team.resend.apiKeys.create({ name: 'A only', permission: 'sending_access', domain_id: team.domainId });
      expect(key.error).toBeNull();
      const sender = new Resend(key.data!.token, { baseUrl: api.url });

      const fromA = await sender.emails.send(emailFrom(team.from('hello')));
      expect(fromA.error).toBeNull();
      const fromB = await sender.emails.send(emailFrom(`hello@${b.name}`));
      expect(fromB.error).toEqual(refusedDomain(b.name));
      const strict = await sender.batch.send([emailFrom(team.from('one')), emailFrom(`two@${b.name}`)]);
      expect(strict.error).toEqual(refusedDomain(b.name, 'emails[1]: '));
      const permissive = await sender.batch.send([emailFrom(team.from('one')), emailFrom(`two@${b.name}`)], {
        batchValidation: 'permissive',
      });
      expect(permissive.error).toBeNull();
      expect(permissive.data).toEqual({
        data: [{ id: expect.stringMatching(UUID) }],
        errors: [{ index: 1, message: expect.stringContaining(b.name) }],
      });

      // The team's full-access key, and a sending_access key without a domain, send from B.
      expect((await team.resend.emails.send(emailFrom(`hello@${b.name}`))).error).toBeNull();
      const unrestricted = new Resend(await api.key(team.teamId, 'sending_access'), { baseUrl: api.url });
      expect((await unrestricted.emails.send(emailFrom(`hello@${b.name}`))).error).toBeNull();
      expect(await db.emailCount(team.teamId)).toBe(4);
    });
  });

  describe('batches', () => {
    it('refuses a whole strict batch for one bad domain, `emails[1]: …`, storing nothing', async () => {
      const team = await api.team();
      const stranger = unknownDomain('strict');
      const { data, error } = await team.resend.batch.send([
        emailFrom(team.from('one')),
        emailFrom(`two@${stranger}`),
        emailFrom(team.from('three')),
      ]);
      expect(data).toBeNull();
      expect(error).toEqual(refusedDomain(stranger, 'emails[1]: '));
      expect(await db.emailCount(team.teamId)).toBe(0);
      expect((await team.resend.emails.list()).data!.data).toEqual([]);
    });

    it('accepts the good emails of a permissive batch and lists the bad domain among the errors, in index order', async () => {
      const team = await api.team();
      const stranger = unknownDomain('permissive');
      const emails = [
        emailFrom(team.from('one'), { subject: 'one' }),
        emailFrom(`two@${stranger}`, { subject: 'two' }),
        emailFrom(team.from('three'), { to: 'not-an-address', subject: 'three' }),
        emailFrom(team.from('four'), { subject: 'four' }),
      ];
      const result = await team.resend.batch.send(emails, { batchValidation: 'permissive', idempotencyKey: 'permissive-domains' });
      expect(result.error).toBeNull();
      expect(result.data).toEqual({
        data: [{ id: expect.stringMatching(UUID) }, { id: expect.stringMatching(UUID) }],
        errors: [
          { index: 1, message: expect.stringContaining(stranger) },
          { index: 2, message: expect.stringContaining('`to`') },
        ],
      });
      const ids = result.data!.data.map((e) => e.id);
      const stored = await Promise.all(ids.map(async (id) => (await team.resend.emails.get(id)).data!.subject));
      expect(stored).toEqual(['one', 'four']);
      expect(await nats.sendCommands('us-east-1')).toEqual(expect.arrayContaining(ids));
      expect(await db.emailCount(team.teamId)).toBe(2);

      const replay = await team.resend.batch.send(emails, { batchValidation: 'permissive', idempotencyKey: 'permissive-domains' });
      expect(replay.data).toEqual(result.data);
      expect(await db.emailCount(team.teamId)).toBe(2);
    });

    it('answers a permissive batch whose every domain is refused with no email and every error', async () => {
      const team = await api.team();
      const stranger = unknownDomain('all-refused');
      const result = await team.resend.batch.send([emailFrom(`one@${stranger}`), emailFrom(`two@${stranger}`)], {
        batchValidation: 'permissive',
      });
      expect(result.error).toBeNull();
      expect(result.data).toEqual({
        data: [],
        errors: [
          { index: 0, message: expect.stringContaining(stranger) },
          { index: 1, message: expect.stringContaining(stranger) },
        ],
      });
      expect(await db.emailCount(team.teamId)).toBe(0);
    });
  });

  describe('region per domain', () => {
    it("puts an email on its from-domain's region stream, not the team's home region's", async () => {
      // Home region us-east-1; its harness domain is in eu-west-1, and it adds one in us-east-1.
      const team = await api.team({ domainRegion: 'eu-west-1' });
      const home = await addVerifiedDomain(team, 'home', 'us-east-1');
      expect((await team.resend.domains.get(team.domainId)).data).toMatchObject({ region: 'eu-west-1' });

      const eu = await team.resend.emails.send(emailFrom(team.from('hello')));
      const us = await team.resend.emails.send(emailFrom(`hello@${home.name}`));
      expect(eu.error).toBeNull();
      expect(us.error).toBeNull();
      const usBatch = await team.resend.batch.send([emailFrom(`one@${home.name}`)]);
      const euBatch = await team.resend.batch.send([emailFrom(team.from('two'))]);
      expect([usBatch.error, euBatch.error]).toEqual([null, null]);
      const [batchUs, batchEu] = [usBatch.data!.data[0].id, euBatch.data!.data[0].id];
      const later = await team.resend.emails.send(emailFrom(team.from('later'), { scheduledAt: 'in 1 hour' }));
      expect(later.error).toBeNull();

      const euStream = await nats.sendCommands('eu-west-1');
      const usStream = await nats.sendCommands('us-east-1');
      expect(euStream).toEqual(expect.arrayContaining([eu.data!.id, batchEu]));
      expect(usStream).toEqual(expect.arrayContaining([us.data!.id, batchUs]));
      for (const id of [eu.data!.id, batchEu]) expect(usStream).not.toContain(id);
      for (const id of [us.data!.id, batchUs]) expect(euStream).not.toContain(id);
      expect([...euStream, ...usStream]).not.toContain(later.data!.id);

      expect(await db.email(eu.data!.id)).toMatchObject({ region: 'eu-west-1' });
      expect(await db.email(batchEu)).toMatchObject({ region: 'eu-west-1' });
      expect(await db.email(later.data!.id)).toMatchObject({ region: 'eu-west-1' });
      expect(await db.email(us.data!.id)).toMatchObject({ region: 'us-east-1' });
      expect(await db.email(batchUs)).toMatchObject({ region: 'us-east-1' });
    });

    it("refuses a batch's email from another region's domain than the emails before it: the whole strict batch, that email of a permissive one", async () => {
      const team = await api.team({ domainRegion: 'eu-west-1' });
      const home = await addVerifiedDomain(team, 'mixed', 'us-east-1');
      const emails = [emailFrom(`one@${home.name}`), emailFrom(team.from('two')), emailFrom(`three@${home.name}`)];
      const crossing = `emails[1]: ${team.domain} sends from eu-west-1, and this batch's emails before it from us-east-1. A batch's emails must all send from domains of one region: send one batch per region.`;

      const strict = await team.resend.batch.send(emails);
      expect(strict.error).toEqual({ statusCode: 422, name: 'validation_error', message: crossing });
      expect(await db.emailCount(team.teamId)).toBe(0);

      const permissive = await team.resend.batch.send(emails, { batchValidation: 'permissive' });
      expect(permissive.error).toBeNull();
      expect(permissive.data!.data).toHaveLength(2);
      expect(permissive.data!.errors).toEqual([{ index: 1, message: crossing.replace('emails[1]: ', '') }]);
      for (const { id } of permissive.data!.data) expect(await db.email(id)).toMatchObject({ region: 'us-east-1' });
    });

    it('sends a team homed in eu-west-1 from its us-east-1 domain in us-east-1', async () => {
      const team = await api.team({ region: 'eu-west-1', domainRegion: 'us-east-1' });
      const sent = await team.resend.emails.send(emailFrom(team.from('hello')));
      expect(sent.error).toBeNull();
      expect(await nats.sendCommands('us-east-1')).toContain(sent.data!.id);
      expect(await nats.sendCommands('eu-west-1')).not.toContain(sent.data!.id);
      expect(await db.email(sent.data!.id)).toMatchObject({ region: 'us-east-1' });
    });
  });

  describe("a domain's status over time", () => {
    it('stops sending once a verified domain fails, keeps sending through temporary_failure, and sends again once verified', async () => {
      const team = await api.team();
      expect((await team.resend.emails.send(emailFrom(team.from('before')))).error).toBeNull();

      await db.setDomainStatus(team.domainId, 'failed');
      const refused = await team.resend.emails.send(emailFrom(team.from('after')), { idempotencyKey: 'status/1' });
      expect(refused.error).toEqual(refusedDomain(team.domain));
      expect(refused.error!.message).toContain('failed');
      const batch = await team.resend.batch.send([emailFrom(team.from('after'))]);
      expect(batch.error).toEqual(refusedDomain(team.domain, 'emails[0]: '));
      const key = new Resend(await api.key(team.teamId, 'sending_access'), { baseUrl: api.url });
      expect((await key.emails.send(emailFrom(team.from('after')))).error).toEqual(refusedDomain(team.domain));
      expect(await db.emailCount(team.teamId)).toBe(1);

      // DNS answering only with temporary errors does not stop a verified domain; the refused
      // request did not hold its idempotency key.
      await db.setDomainStatus(team.domainId, 'temporary_failure');
      const through = await team.resend.emails.send(emailFrom(team.from('after')), { idempotencyKey: 'status/1' });
      expect(through.error).toBeNull();
      expect((await team.resend.batch.send([emailFrom(team.from('batch'))])).error).toBeNull();

      await db.setDomainStatus(team.domainId, 'verified');
      expect((await team.resend.emails.send(emailFrom(team.from('again')))).error).toBeNull();
      expect(await db.emailCount(team.teamId)).toBe(4);
    });
  });
});
