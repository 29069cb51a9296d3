import { randomUUID } from 'node:crypto';
import { SuppressionsService } from './suppressions.service';
import { startTestApi, TestApi, TestTeam } from '../../../test/support/api-harness';
import { NatsProbe } from '../../../test/support/nats-probe';

/** What the delivery engine uses: isSuppressed before a send, suppress after a hard bounce or a complaint. */
describe('SuppressionsService for the delivery engine', () => {
  let api: TestApi;
  let probe: NatsProbe;
  let team: TestTeam;
  let other: TestTeam;
  let service: SuppressionsService;
  const address = (label = 'x') => `${label}-${randomUUID().slice(0, 8)}@example.com`;

  beforeAll(async () => {
    api = await startTestApi();
    probe = await NatsProbe.open(api.config);
    team = await api.team();
    other = await api.team();
    service = api.app.get(SuppressionsService);
  });
  afterAll(async () => {
    await probe?.close();
    await api?.close();
  });

  it('answers which recipients are suppressed, lowercased, for this team only', async () => {
    const [a, b, c] = [address('a'), address('b'), address('c')];
    await service.suppress(team.teamId, a, 'bounce', randomUUID(), 'smtp; 550 5.1.1 unknown user');
    await service.add(team.teamId, { email: b });
    await service.suppress(other.teamId, c, 'complaint', randomUUID(), null);
    const found = await service.isSuppressed(team.teamId, [a.toUpperCase(), `Bob <${b}>`, c, 'not an address']);
    expect(found).toEqual(new Set([a, b]));
    expect(await service.isSuppressed(team.teamId, [])).toEqual(new Set());
    expect(await service.isSuppressed(other.teamId, [a, b, c])).toEqual(new Set([c]));
  });

  it('re-suppresses an address listed already: same entry, new origin, source and reason, and an event', async () => {
    const email = address('again');
    const manual = await service.add(team.teamId, { email });
    const source = randomUUID();
    const bounced = await service.suppress(team.teamId, email.toUpperCase(), 'bounce', source, 'smtp; 550 gone');
    expect(bounced).toMatchObject({ id: manual.id, email, origin: 'bounce', sourceId: source, reason: 'smtp; 550 gone' });
    const complaint = randomUUID();
    const complained = await service.suppress(team.teamId, email, 'complaint', complaint, null);
    expect(complained).toMatchObject({ id: manual.id, origin: 'complaint', sourceId: complaint, reason: null });
    expect(await service.get(team.teamId, email)).toMatchObject({ id: manual.id, origin: 'complaint', source_id: complaint });

    const events = (await probe.events('us-east-1')).filter((e) => (e.data as { id: string }).id === manual.id);
    expect(events.map((e) => [e.type, (e.data as { origin: string }).origin, (e.data as { source_id: string | null }).source_id])).toEqual([
      ['suppression.added', 'manual', null],
      ['suppression.added', 'bounce', source],
      ['suppression.added', 'complaint', complaint],
    ]);
  });

  it('refuses what is not an address', async () => {
    await expect(service.suppress(team.teamId, 'nope', 'bounce', null, null)).rejects.toMatchObject({ code: 'validation_error' });
  });
});
