import { loadConfig, pick } from '@herald/config';
import { BUS_CONFIG } from './bus.config';
import { NatsService } from './nats.service';
import { StreamsService } from './streams.service';

describe('StreamsService.desiredStreams', () => {
  const streams = (env: Record<string, string>) =>
    new StreamsService(pick(loadConfig({ HERALD_REGIONS: 'us-east-1,eu-west-1', ...env }), BUS_CONFIG.keys), {} as NatsService).desiredStreams();

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
