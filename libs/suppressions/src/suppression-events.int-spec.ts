import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ResourceEventOutbox } from '@herald/outbox';
import { eventually } from '@herald/testing';
import { NatsProbe } from '../../../test/support/nats-probe';
import { OutboxWorld, startOutboxWorld } from '../../../test/support/outbox-world';
import { SuppressionsModule } from './suppressions.module';
import { SuppressionsService } from './suppressions.service';

interface OutboxRow {
  id: string;
  type: string;
  region: string;
  data: { id: string; email: string };
  published_at: Date | null;
}

/** Suppression events go through the resource event outbox: recorded with the change, then published. */
describe('suppression events (Postgres, NATS)', () => {
  let world: OutboxWorld;
  let service: SuppressionsService;
  let outbox: ResourceEventOutbox;
  let db: DataSource;
  let probe: NatsProbe;
  let teamId: string;

  const address = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;
  const outboxRows = async (email: string): Promise<OutboxRow[]> =>
    db.query(`SELECT id, type, region, data, published_at FROM resource_events WHERE data->>'email' = $1 ORDER BY created_at, id`, [email]);
  const refuseToRecord = () => jest.spyOn(outbox, 'record').mockRejectedValueOnce(new Error('outbox unavailable'));

  beforeAll(async () => {
    world = await startOutboxWorld([SuppressionsModule]);
    ({ outbox, db, probe } = world);
    service = world.moduleRef.get(SuppressionsService);
    teamId = randomUUID();
    await db.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', 'eu-west-1', 'free')`, [teamId]);
  });

  afterEach(() => jest.restoreAllMocks());

  afterAll(() => world?.close());

  it("records suppression.added and suppression.removed in the outbox for the team's home region, publishes them and marks them published", async () => {
    const [one, two] = [address('one'), address('two')];
    await service.add(teamId, { email: one });
    await service.add(teamId, { email: one }); // listed already: no event
    await service.addMany(teamId, { emails: [two] });
    await service.suppress(teamId, two, 'bounce', randomUUID(), 'smtp; 550 gone');
    await service.remove(teamId, one);
    await service.removeMany(teamId, { emails: [two] });

    const rows = [...(await outboxRows(one)), ...(await outboxRows(two))];
    expect(rows.map((r) => [r.type, r.region, r.data.email])).toEqual([
      ['suppression.added', 'eu-west-1', one],
      ['suppression.removed', 'eu-west-1', one],
      ['suppression.added', 'eu-west-1', two],
      ['suppression.added', 'eu-west-1', two],
      ['suppression.removed', 'eu-west-1', two],
    ]);
    const onStream = new Map((await probe.events('eu-west-1')).map((e) => [e.id, e]));
    for (const row of rows) expect(onStream.get(row.id)).toMatchObject({ type: row.type, team_id: teamId, data: row.data });
    await eventually(async () => {
      const published = [...(await outboxRows(one)), ...(await outboxRows(two))].map((r) => r.published_at);
      expect(published.every((at) => at instanceof Date)).toBe(true);
    });
  });

  it('adds nothing when the event cannot be recorded', async () => {
    const email = address('refused');
    refuseToRecord();
    await expect(service.add(teamId, { email })).rejects.toThrow('outbox unavailable');
    refuseToRecord();
    await expect(service.suppress(teamId, email, 'complaint', randomUUID(), null)).rejects.toThrow('outbox unavailable');
    expect(await service.isSuppressed(teamId, [email])).toEqual(new Set());
    expect(await outboxRows(email)).toEqual([]);
  });

  it('removes nothing when the event cannot be recorded', async () => {
    const email = address('kept');
    await service.add(teamId, { email });
    refuseToRecord();
    await expect(service.remove(teamId, email)).rejects.toThrow('outbox unavailable');
    refuseToRecord();
    await expect(service.removeMany(teamId, { emails: [email] })).rejects.toThrow('outbox unavailable');
    expect(await service.isSuppressed(teamId, [email])).toEqual(new Set([email]));
    expect((await outboxRows(email)).map((r) => r.type)).toEqual(['suppression.added']);
  });
});
