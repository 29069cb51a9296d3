import { Logger } from '@nestjs/common';
import { JetStreamApiError, RetentionPolicy, StreamConfig } from '@nats-io/jetstream';
import { loadConfig, pick } from '@herald/config';
import { BUS_CONFIG } from './bus.config';
import { NatsService } from './nats.service';
import { RegionAvailability } from './region-availability';
import { StreamsService } from './streams.service';

describe('StreamsService.desiredStreams', () => {
  const streams = (env: Record<string, string>) =>
    new StreamsService(
      pick(loadConfig({ HERALD_REGIONS: 'us-east-1,eu-west-1', ...env }), BUS_CONFIG.keys),
      {} as NatsService,
      {} as RegionAvailability,
    ).desiredStreams();

  it('gives every region a send stream, an events stream and a tracking stream, unplaced on a single server', () => {
    const desired = streams({});
    expect(desired.map((s) => s.name)).toEqual([
      'HERALD_SEND_US_EAST_1',
      'HERALD_EVENTS_US_EAST_1',
      'HERALD_TRACKING_US_EAST_1',
      'HERALD_SEND_EU_WEST_1',
      'HERALD_EVENTS_EU_WEST_1',
      'HERALD_TRACKING_EU_WEST_1',
    ]);
    expect(desired.every((s) => s.placement === undefined)).toBe(true);
  });

  it("places each region's streams on the servers tagged with the region when asked, with the region's replicas", () => {
    const desired = streams({ NATS_PLACE_BY_REGION: 'true', NATS_REPLICAS: '1', NATS_REGION_REPLICAS: 'us-east-1=3' });
    expect(desired.map((s) => [s.name, s.placement?.tags, s.num_replicas])).toEqual([
      ['HERALD_SEND_US_EAST_1', ['region:us-east-1'], 3],
      ['HERALD_EVENTS_US_EAST_1', ['region:us-east-1'], 3],
      ['HERALD_TRACKING_US_EAST_1', ['region:us-east-1'], 3],
      ['HERALD_SEND_EU_WEST_1', ['region:eu-west-1'], 1],
      ['HERALD_EVENTS_EU_WEST_1', ['region:eu-west-1'], 1],
      ['HERALD_TRACKING_EU_WEST_1', ['region:eu-west-1'], 1],
    ]);
  });

  it('refuses replicas for a region it does not serve, or out of range', () => {
    expect(() => streams({ NATS_REGION_REPLICAS: 'sa-east-1=3' })).toThrow('NATS_REGION_REPLICAS: names a region that is not in HERALD_REGIONS');
    expect(() => streams({ NATS_REGION_REPLICAS: 'us-east-1=7' })).toThrow('must be replicas from 1 to 5');
  });
});

describe('StreamsService.ensureStreams', () => {
  const LEADERLESS = { code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' };
  /** The stream part of a JetStreamManager, keeping the streams in memory; `refuse` decides which requests fail and how. */
  class FakeStreams {
    readonly existing = new Map<string, StreamConfig>();
    readonly calls: string[] = [];
    refuse: (op: 'info' | 'add' | 'update', name: string) => Error | null = () => null;

    private request(op: 'info' | 'add' | 'update', name: string): void {
      this.calls.push(`${op} ${name}`);
      const error = this.refuse(op, name);
      if (error) throw error;
    }
    async info(name: string) {
      this.request('info', name);
      const config = this.existing.get(name);
      if (!config) throw new JetStreamApiError({ code: 404, err_code: 10059, description: 'stream not found' });
      return { config };
    }
    async add(config: StreamConfig) {
      this.request('add', config.name);
      this.existing.set(config.name, config);
      return { config };
    }
    async update(name: string, config: StreamConfig) {
      this.request('update', name);
      this.existing.set(name, config);
      return { config };
    }
  }

  let streams: FakeStreams;
  let unreachable: jest.Mock;
  let warn: jest.SpyInstance;
  let service: StreamsService;

  beforeEach(() => {
    jest.useFakeTimers();
    streams = new FakeStreams();
    unreachable = jest.fn();
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const config = pick(loadConfig({ HERALD_REGION: 'us-east-1', HERALD_REGIONS: 'us-east-1,eu-west-1' }), BUS_CONFIG.keys);
    const nats = { jetstreamManager: async () => ({ streams }) } as unknown as NatsService;
    service = new StreamsService(config, nats, { streamUnreachable: unreachable } as unknown as RegionAvailability);
  });
  afterEach(() => {
    service.onModuleDestroy();
    jest.restoreAllMocks();
    jest.useRealTimers();
  });
  const made = () => service.desiredStreams().forEach((desired) => streams.existing.set(desired.name, desired as StreamConfig));
  const warnings = () => warn.mock.calls.map(([message]) => String(message));

  it("creates every region's streams on a first boot, its own region's first", async () => {
    await service.ensureStreams();
    expect(streams.calls.filter((call) => call.startsWith('add'))).toEqual(service.desiredStreams().map((desired) => `add ${desired.name}`));
    expect(streams.calls.indexOf('info HERALD_SEND_EU_WEST_1')).toBeGreaterThan(streams.calls.indexOf('add HERALD_TRACKING_US_EAST_1'));
  });

  it('only reads the streams that exist with its settings: nothing goes to the meta leader', async () => {
    made();
    await service.ensureStreams();
    expect(streams.calls).toEqual(service.desiredStreams().map((desired) => `info ${desired.name}`));
    expect(warnings()).toEqual([]);
  });

  it('with the meta group leaderless, carries on with a stream that differs and changes it in the background', async () => {
    made();
    streams.existing.set('HERALD_EVENTS_US_EAST_1', { ...streams.existing.get('HERALD_EVENTS_US_EAST_1')!, max_age: 3600e9 });
    let leaderless = true;
    streams.refuse = (op) => (leaderless && op === 'update' ? new JetStreamApiError(LEADERLESS) : null);
    await service.ensureStreams();
    expect(warnings()).toEqual([
      expect.stringMatching(/^stream HERALD_EVENTS_US_EAST_1 differs from this release's settings in max_age, but JetStream cannot change it now/),
    ]);
    expect(warnings()[0]).toContain('the JetStream meta group has no leader');

    // At boot, then 1 s and 3 s after it (1 s, then 2 s apart).
    await jest.advanceTimersByTimeAsync(3_000);
    expect(streams.calls.filter((call) => call === 'update HERALD_EVENTS_US_EAST_1')).toHaveLength(3);
    leaderless = false;
    await jest.advanceTimersByTimeAsync(4_000);
    expect(streams.existing.get('HERALD_EVENTS_US_EAST_1')!.max_age).toBe(7 * 24 * 3600e9);
    const calls = streams.calls.length;
    await jest.advanceTimersByTimeAsync(60_000);
    expect(streams.calls).toHaveLength(calls);
  });

  it("boots without another region's streams that do not answer, refusing that region's sends until they do", async () => {
    made();
    let down = true;
    streams.refuse = (_op, name) => (down && name.endsWith('_EU_WEST_1') ? new JetStreamApiError(LEADERLESS) : null);
    await service.ensureStreams();
    expect(unreachable).toHaveBeenCalledWith('eu-west-1', expect.stringContaining('its stream HERALD_SEND_EU_WEST_1'));
    expect(warnings()).toEqual([
      expect.stringMatching(
        /^region eu-west-1's streams HERALD_SEND_EU_WEST_1, HERALD_EVENTS_EU_WEST_1, HERALD_TRACKING_EU_WEST_1 cannot be reached/,
      ),
    ]);
    down = false;
    await jest.advanceTimersByTimeAsync(1_000);
    const calls = streams.calls.length;
    await jest.advanceTimersByTimeAsync(60_000);
    expect(streams.calls).toHaveLength(calls);
  });

  it('still fails the boot on what JetStream refuses for another reason', async () => {
    made();
    streams.existing.set('HERALD_SEND_EU_WEST_1', { ...streams.existing.get('HERALD_SEND_EU_WEST_1')!, retention: RetentionPolicy.Limits });
    streams.refuse = (op) =>
      op === 'update'
        ? new JetStreamApiError({ code: 500, err_code: 10052, description: 'stream configuration update can not change retention' })
        : null;
    await expect(service.ensureStreams()).rejects.toThrow('stream HERALD_SEND_EU_WEST_1 differs in retention and could not be updated');
  });

  it('gives up with a clear error when its own region has no stream and none can be made', async () => {
    streams.refuse = () => new JetStreamApiError(LEADERLESS);
    const boot = expect(service.ensureStreams()).rejects.toThrow(
      'making the streams of us-east-1: JetStream did not answer within 30 s (JetStream system temporarily unavailable: the JetStream meta group has no leader',
    );
    await jest.advanceTimersByTimeAsync(31_000);
    await boot;
  });
});
