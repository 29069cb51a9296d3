import { isHeraldError } from '@herald/core';
import type { BusConfig } from './bus.config';
import { JetStreamPublishError } from './jetstream-publisher';
import type { NatsService } from './nats.service';
import { REGION_PROBE_MS, RegionAvailability } from './region-availability';

describe('RegionAvailability', () => {
  let streamAnswers: boolean;
  const probed: string[] = [];
  const nats = {
    jetstreamManager: async () => ({
      streams: {
        info: async (name: string) => {
          probed.push(name);
          if (!streamAnswers) throw new Error('timeout');
          return {};
        },
      },
    }),
  } as unknown as NatsService;
  const config = { HERALD_REGION: 'us-east-1', NATS_NAMESPACE: 'herald' } as BusConfig;
  let regions: RegionAvailability;

  const noStream = (region: string) => new JetStreamPublishError('no_stream', `herald.${region}.send`, 'no JetStream stream');
  const refusal = (region: string): unknown => {
    try {
      regions.assertReachable(region);
      return null;
    } catch (error) {
      return isHeraldError(error) ? { code: error.code, retryAfter: error.retryAfterSeconds } : error;
    }
  };

  beforeEach(() => {
    jest.useFakeTimers();
    streamAnswers = false;
    probed.length = 0;
    regions = new RegionAvailability(config, nats);
  });
  afterEach(() => {
    regions.onModuleDestroy();
    jest.useRealTimers();
  });

  it("refuses another region's sends once nobody answers for its stream, until a probe reaches it", async () => {
    expect(refusal('eu-west-1')).toBeNull();
    regions.publishFailed('eu-west-1', noStream('eu-west-1'));
    expect(refusal('eu-west-1')).toEqual({ code: 'service_unavailable', retryAfter: 1 });
    expect(refusal('sa-east-1')).toBeNull();

    await jest.advanceTimersByTimeAsync(REGION_PROBE_MS * 3);
    expect(probed).toEqual(['HERALD_SEND_EU_WEST_1', 'HERALD_SEND_EU_WEST_1', 'HERALD_SEND_EU_WEST_1']);
    expect(refusal('eu-west-1')).not.toBeNull();

    streamAnswers = true;
    await jest.advanceTimersByTimeAsync(REGION_PROBE_MS);
    expect(refusal('eu-west-1')).toBeNull();
    await jest.advanceTimersByTimeAsync(REGION_PROBE_MS * 3);
    expect(probed).toHaveLength(4);
  });

  it('never marks the home region, nor a region for a timeout or a refused publish', () => {
    regions.publishFailed('us-east-1', noStream('us-east-1'));
    regions.publishFailed('eu-west-1', new JetStreamPublishError('timeout', 'herald.eu-west-1.send', 'no ack in time'));
    regions.publishFailed('eu-west-1', new JetStreamPublishError('rejected', 'herald.eu-west-1.send', 'maximum messages exceeded'));
    regions.publishFailed('eu-west-1', new Error('connection closed'));
    expect([refusal('us-east-1'), refusal('eu-west-1')]).toEqual([null, null]);
  });
});
