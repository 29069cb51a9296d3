import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ResourceEventOutbox } from '@herald/outbox';
import { eventually } from '@herald/testing';
import { NatsProbe } from '../../../test/support/nats-probe';
import { OutboxWorld, startOutboxWorld } from '../../../test/support/outbox-world';
import { DomainsModule } from './domains.module';
import { DomainsRepository } from './domains.repository';
import { DomainsService } from './domains.service';

interface OutboxRow {
  id: string;
  type: string;
  region: string;
  team_id: string;
  data: { id: string; status: string };
  published_at: Date | null;
}

/** Domain events go through the resource event outbox: recorded with the change, then published. */
describe('domain events (Postgres, NATS)', () => {
  let world: OutboxWorld;
  let service: DomainsService;
  let repository: DomainsRepository;
  let outbox: ResourceEventOutbox;
  let db: DataSource;
  let probe: NatsProbe;
  let teamId: string;
  let count = 0;

  const owner = () => ({ teamId, homeRegion: 'us-east-1' });
  const name = () => `events${++count}-${randomUUID().slice(0, 8)}.example`;
  const outboxRows = async (domainId: string): Promise<OutboxRow[]> =>
    db.query(`SELECT id, type, region, team_id, data, published_at FROM resource_events WHERE data->>'id' = $1 ORDER BY created_at, id`, [domainId]);
  const refuseToRecord = () => jest.spyOn(outbox, 'record').mockRejectedValueOnce(new Error('outbox unavailable'));

  beforeAll(async () => {
    world = await startOutboxWorld([DomainsModule]);
    ({ outbox, db, probe } = world);
    service = world.moduleRef.get(DomainsService);
    repository = world.moduleRef.get(DomainsRepository);
    teamId = randomUUID();
    await db.query(`INSERT INTO teams (id, name, home_region, plan) VALUES ($1, 'Team', 'us-east-1', 'free')`, [teamId]);
  });

  afterEach(() => jest.restoreAllMocks());

  afterAll(() => world?.close());

  it('records domain.created, domain.updated and domain.deleted in the outbox, publishes them and marks them published', async () => {
    const created = await service.create(owner(), { name: name(), region: 'eu-west-1' });
    await service.update(teamId, created.id, { click_tracking: true });
    await service.remove(teamId, created.id);

    const rows = await outboxRows(created.id);
    expect(rows.map((r) => [r.type, r.region, r.team_id])).toEqual([
      ['domain.created', 'eu-west-1', teamId],
      ['domain.updated', 'eu-west-1', teamId],
      ['domain.deleted', 'eu-west-1', teamId],
    ]);
    const onStream = (await probe.events('eu-west-1')).filter((e) => (e.data as { id: string }).id === created.id);
    expect(onStream.map((e) => [e.id, e.type, e.data])).toEqual(rows.map((r) => [r.id, r.type, r.data]));
    await eventually(async () => expect((await outboxRows(created.id)).every((r) => r.published_at instanceof Date)).toBe(true));
  });

  it('creates no domain when its event cannot be recorded', async () => {
    refuseToRecord();
    const requested = name();
    await expect(service.create(owner(), { name: requested })).rejects.toThrow('outbox unavailable');
    expect(await repository.findAnyByName(requested)).toBeNull();
    // The name is free: nothing of the failed creation stayed behind.
    expect((await service.create(owner(), { name: requested })).name).toBe(requested);
  });

  it('keeps the domain as it was when the event of an update or a deletion cannot be recorded', async () => {
    const created = await service.create(owner(), { name: name() });
    refuseToRecord();
    await expect(service.update(teamId, created.id, { open_tracking: true })).rejects.toThrow('outbox unavailable');
    expect(await repository.get(teamId, created.id)).toMatchObject({ openTracking: false });
    refuseToRecord();
    await expect(service.remove(teamId, created.id)).rejects.toThrow('outbox unavailable');
    expect(await repository.get(teamId, created.id)).not.toBeNull();
    expect((await outboxRows(created.id)).map((r) => r.type)).toEqual(['domain.created']);
  });
});
