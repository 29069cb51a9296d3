import { randomUUID } from 'node:crypto';
import { startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { NatsProbe } from '../support/nats-probe';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The events of the /domains endpoints (domains.e2e-spec.ts has their answers), read off the events streams. */
describe('domains through the resend SDK', () => {
  let api: TestApi;
  let probe: NatsProbe;
  let globex: TestTeam;
  /** Names are global across teams, and suites share nothing but the machine: keep them unique. */
  const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}.example`;

  beforeAll(async () => {
    api = await startTestApi({
      MAIL_DOMAIN: 'mail.herald.test',
      REGION_BOUNCE_HOSTS: 'eu-west-1=feedback.eu.herald.test',
      REGION_SPF: 'eu-west-1=ip4:203.0.113.0/24 ip6:2001:db8::/32',
    });
    probe = await NatsProbe.open(api.config);
    globex = await api.team({ region: 'eu-west-1' });
  });
  afterAll(async () => {
    await probe?.close();
    await api?.close();
  });

  it("publishes domain.created, domain.updated and domain.deleted on the events stream of the domain's region", async () => {
    const created = (await globex.resend.domains.create({ name: unique('events') })).data!;
    await globex.resend.domains.update({ id: created.id, clickTracking: true });
    await globex.resend.domains.verify(created.id);
    await globex.resend.domains.remove(created.id);

    const ns = api.config.NATS_NAMESPACE;
    const events = (await probe.events('eu-west-1')).filter((e) => (e.data as { id: string }).id === created.id);
    expect(events.map((e) => [e.type, e.subject, (e.data as { status: string }).status])).toEqual([
      ['domain.created', `${ns}.eu-west-1.events.domain.created`, 'not_started'],
      ['domain.updated', `${ns}.eu-west-1.events.domain.updated`, 'not_started'],
      ['domain.updated', `${ns}.eu-west-1.events.domain.updated`, 'pending'],
      ['domain.deleted', `${ns}.eu-west-1.events.domain.deleted`, 'pending'],
    ]);
    for (const event of events) {
      expect(event).toEqual({
        id: expect.stringMatching(UUID),
        type: event.type,
        subject: event.subject,
        created_at: expect.stringMatching(ISO_TIME),
        team_id: globex.teamId,
        data: {
          id: created.id,
          name: created.name,
          status: expect.any(String),
          created_at: expect.stringMatching(ISO_TIME),
          region: 'eu-west-1',
          capabilities: { sending: 'enabled', receiving: 'disabled' },
          paused: null,
          records: created.records,
        },
      });
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(4);
    const elsewhere = await probe.events('us-east-1');
    expect(elsewhere.filter((e) => (e.data as { id: string }).id === created.id)).toEqual([]);
  });
});
