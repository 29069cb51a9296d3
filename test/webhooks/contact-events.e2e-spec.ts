import { randomUUID } from 'node:crypto';
import { BOTH, verifiesWith, waitFor, WebhooksWorld } from './webhooks-world';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** contact.* events from the contacts API reach a subscribed webhook, signed, through the resource event outbox. */
describe('contact webhooks', () => {
  let world: WebhooksWorld;

  beforeAll(async () => {
    world = await WebhooksWorld.start();
  });
  afterAll(() => world?.close());
  afterEach(() => world.checkSignatures());

  it('delivers contact.created, contact.updated and contact.deleted with Resend’s data', async () => {
    const { team, path, secret } = await world.teamWithWebhook(['contact.created', 'contact.updated', 'contact.deleted']);
    const segment = (await team.resend.segments.create({ name: 'Hooked' })).data!.id;
    const email = `hook-${randomUUID().slice(0, 8)}@example.com`;
    const id = (await team.resend.contacts.create({ email, firstName: 'Hook', segments: [{ id: segment }] })).data!.id;
    await team.resend.contacts.update({ id, unsubscribed: true });
    await team.resend.contacts.remove(id);

    const forContact = () => world.receiver.at(path).filter((d) => d.json.data.id === id);
    await waitFor(() => forContact().length === 3, 'three contact deliveries');
    const deliveries = forContact().sort(
      (a, b) =>
        ['contact.created', 'contact.updated', 'contact.deleted'].indexOf(a.json.type) -
        ['contact.created', 'contact.updated', 'contact.deleted'].indexOf(b.json.type),
    );
    expect(deliveries.map((d) => d.json.type)).toEqual(['contact.created', 'contact.updated', 'contact.deleted']);
    expect(deliveries[0].json).toEqual({
      type: 'contact.created',
      created_at: expect.stringMatching(ISO),
      data: {
        id,
        audience_id: segment,
        segment_ids: [segment],
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        email,
        first_name: 'Hook',
        last_name: null,
        unsubscribed: false,
      },
    });
    expect(deliveries[1].json.data).toMatchObject({ id, unsubscribed: true });
    for (const delivery of deliveries) expect(verifiesWith(delivery, secret)).toEqual(BOTH);
  });
});
