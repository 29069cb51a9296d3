import { countEvent, fromDomainOf, hourOf, sumByKey, type StreamedEvent } from './rollup-counts';

const TEAM = '0190a000-0000-7000-8000-000000000001';
const event = (type: string, data: Record<string, unknown>, id = 'e1'): StreamedEvent => ({
  id,
  type,
  created_at: '2026-11-26T14:37:12.345Z',
  team_id: TEAM,
  data: { from: 'Acme <news@Mail.Acme.test>', to: ['a@x.test'], ...data },
});

describe('countEvent', () => {
  it('keys an event by team, lowercase from domain, region and the hour it happened', () => {
    expect(countEvent(event('email.sent', { to: ['a@x.test', 'b@x.test'] }), 'eu-west-1')).toEqual({
      id: 'e1',
      key: { teamId: TEAM, domain: 'mail.acme.test', region: 'eu-west-1', hour: new Date('2026-11-26T14:00:00.000Z') },
      counts: { sent: 2 },
    });
  });

  it.each([
    ['email.delivered', {}, { delivered: 1 }],
    ['email.delivery_delayed', {}, { delivery_delayed: 1 }],
    ['email.bounced', { bounce: { type: 'Permanent' } }, { bounced_hard: 1 }],
    ['email.bounced', { bounce: { type: 'Transient' } }, { bounced_soft: 1 }],
    ['email.bounced', { bounce: { type: 'Undetermined' } }, { bounced_soft: 1 }],
    ['email.complained', {}, { complained: 1 }],
    ['email.suppressed', {}, { suppressed: 1 }],
    ['email.failed', {}, { failed: 1 }],
    ['email.opened', { tracking: { machine: false, unique: true } }, { opened_human: 1, opened_human_unique: 1 }],
    ['email.opened', { tracking: { machine: true, unique: false } }, { opened_machine: 1 }],
    ['email.clicked', { tracking: { machine: true, unique: true } }, { clicked_machine: 1, clicked_machine_unique: 1 }],
    ['email.clicked', {}, { clicked_human: 1 }],
  ])('%s %j counts %j', (type, data, counts) => {
    expect(countEvent(event(type, data), 'us-east-1')?.counts).toEqual(counts);
  });

  it('leaves out what it does not count: domain events, scheduling, no from domain, no time', () => {
    expect(countEvent(event('domain.updated', {}), 'us-east-1')).toBeNull();
    expect(countEvent(event('email.scheduled', {}), 'us-east-1')).toBeNull();
    expect(countEvent(event('email.sent', { from: 'nobody' }), 'us-east-1')).toBeNull();
    expect(countEvent({ ...event('email.sent', {}), created_at: 'never' }, 'us-east-1')).toBeNull();
  });
});

describe('fromDomainOf and hourOf', () => {
  it('read the domain of a display-name address or a bare one', () => {
    expect(fromDomainOf('"Acme, Inc" <hi@acme.test> ')).toBe('acme.test');
    expect(fromDomainOf('hi@ACME.test')).toBe('acme.test');
    expect(fromDomainOf(42)).toBeNull();
  });

  it('floors to the UTC hour', () => {
    expect(hourOf(new Date('2026-11-26T23:59:59.999Z')).toISOString()).toBe('2026-11-26T23:00:00.000Z');
  });
});

describe('sumByKey', () => {
  it('sums a batch into one row per key, in a fixed order', () => {
    const a = countEvent(event('email.sent', {}, 'a'), 'us-east-1')!;
    const b = countEvent(event('email.delivered', {}, 'b'), 'us-east-1')!;
    const c = countEvent(event('email.sent', {}, 'c'), 'eu-west-1')!;
    const rows = sumByKey([c, a, b]);
    expect(rows.map((r) => [r.key.region, r.counts.sent, r.counts.delivered])).toEqual([
      ['eu-west-1', 1, 0],
      ['us-east-1', 1, 1],
    ]);
  });
});
