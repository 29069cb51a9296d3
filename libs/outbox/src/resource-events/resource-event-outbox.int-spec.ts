import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { newId } from '@herald/core';
import { eventually } from '@herald/testing';
import { NatsProbe } from '../../../../test/support/nats-probe';
import { OutboxWorld, startOutboxWorld } from '../../../../test/support/outbox-world';
import { ResourceEventOutbox } from './resource-event-outbox';
import { ResourceEventsModule } from './resource-events.module';

/** The outbox on the machine's Postgres and NATS: what a publisher that died left behind is relayed. */
describe('ResourceEventOutbox (Postgres, NATS)', () => {
  let world: OutboxWorld;
  let outbox: ResourceEventOutbox;
  let db: DataSource;
  let probe: NatsProbe;

  const publishedAt = async (id: string): Promise<Date | null> =>
    ((await db.query(`SELECT published_at FROM resource_events WHERE id = $1`, [id])) as { published_at: Date | null }[])[0].published_at;
  /** An event recorded `ageMs` ago whose publisher never published it. */
  const leftBehind = async (region: string, ageMs: number) => {
    const id = newId();
    const createdAt = new Date(Date.now() - ageMs);
    await db.query(`INSERT INTO resource_events (id, team_id, region, type, data, created_at) VALUES ($1, $2, $3, 'suppression.added', $4, $5)`, [
      id,
      randomUUID(),
      region,
      JSON.stringify({ id: randomUUID(), email: 'lost@example.com' }),
      createdAt,
    ]);
    return { id, createdAt };
  };

  beforeAll(async () => {
    world = await startOutboxWorld([ResourceEventsModule]);
    ({ outbox, db, probe } = world);
  });

  afterAll(() => world?.close());

  it('relays an event of its region left unpublished for more than 10 s, once', async () => {
    const region = world.isolated.config.HERALD_REGION;
    const lost = await leftBehind(region, 11_000);
    const recent = await leftBehind(region, 0);

    expect(await outbox.relayOnce()).toBe(1);
    const relayed = (await probe.events(region)).filter((e) => e.id === lost.id);
    expect(relayed).toEqual([
      expect.objectContaining({
        id: lost.id,
        type: 'suppression.added',
        created_at: lost.createdAt.toISOString(),
        data: { id: expect.any(String), email: 'lost@example.com' },
      }),
    ]);
    expect(await publishedAt(lost.id)).toBeInstanceOf(Date);
    // Its publisher may still be on it.
    expect(await publishedAt(recent.id)).toBeNull();

    expect(await outbox.relayOnce()).toBe(0);
    expect((await probe.events(region)).filter((e) => e.id === lost.id)).toHaveLength(1);
  });

  it("leaves another region's events to that region's processes", async () => {
    const other = world.isolated.config.HERALD_REGIONS.find((r) => r !== world.isolated.config.HERALD_REGION)!;
    const lost = await leftBehind(other, 11_000);
    expect(await outbox.relayOnce()).toBe(0);
    expect(await publishedAt(lost.id)).toBeNull();
  });

  it('publishes recorded events after the commit and marks them published in a batch', async () => {
    const region = world.isolated.config.HERALD_REGION;
    const event = { id: newId(), type: 'domain.updated', created_at: new Date().toISOString(), team_id: randomUUID(), data: { id: 'd' } };
    await db.transaction((m) => outbox.record(m, region, [event]));
    await db.transaction((m) => outbox.record(m, region, [event])); // recording it again is a no-op
    await outbox.publish(region, [event]);
    expect((await probe.events(region)).filter((e) => e.id === event.id)).toEqual([expect.objectContaining(event)]);
    await eventually(async () => expect(await publishedAt(event.id)).toBeInstanceOf(Date));
  });
});
