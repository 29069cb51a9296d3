import { loadConfig, pick } from '@herald/config';
import { BUS_CONFIG } from './bus.config';
import { NatsService } from './nats.service';
import { StreamsService } from './streams.service';

describe('StreamsService.desiredStreams', () => {
  const streams = (env: Record<string, string>) =>
    new StreamsService(pick(loadConfig({ HERALD_REGIONS: 'us-east-1,eu-west-1', ...env }), BUS_CONFIG.keys), {} as NatsService).desiredStreams();

  it('gives every region a send stream and an events stream, unplaced on a single server', () => {
    const desired = streams({});
    expect(desired.map((s) => s.name)).toEqual([
      'HERALD_SEND_US_EAST_1',
      'HERALD_EVENTS_US_EAST_1',
      'HERALD_SEND_EU_WEST_1',
      'HERALD_EVENTS_EU_WEST_1',
    ]);
    expect(desired.every((s) => s.placement === undefined)).toBe(true);
  });

  it("places each region's streams in the cluster named after the region when asked", () => {
    const desired = streams({ NATS_PLACE_BY_REGION: 'true', NATS_REPLICAS: '3' });
    expect(desired.map((s) => [s.name, s.placement?.cluster, s.num_replicas])).toEqual([
      ['HERALD_SEND_US_EAST_1', 'us-east-1', 3],
      ['HERALD_EVENTS_US_EAST_1', 'us-east-1', 3],
      ['HERALD_SEND_EU_WEST_1', 'eu-west-1', 3],
      ['HERALD_EVENTS_EU_WEST_1', 'eu-west-1', 3],
    ]);
  });
});
