import { JetStreamApiError } from '@nats-io/jetstream';
import { jetStreamUnavailable, retryInBackground, whileJetStreamForms } from './jetstream-boot';

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

describe('whileJetStreamForms', () => {
  it('asks again while JetStream times out, then returns what the work returned', async () => {
    const retries: number[] = [];
    let calls = 0;
    const result = await whileJetStreamForms(
      'making the streams',
      async () => {
        if (++calls < 3) throw new TimeoutError('timeout');
        return 'made';
      },
      (_message, delay) => retries.push(delay),
    );
    expect(result).toBe('made');
    expect(retries).toEqual([100, 200]);
  });

  it('rethrows any other error at once', async () => {
    let calls = 0;
    const work = async () => {
      calls++;
      throw new Error('stream name already in use with a different configuration');
    };
    await expect(whileJetStreamForms('making the streams', work, () => undefined)).rejects.toThrow('already in use');
    expect(calls).toBe(1);
  });

  it('gives up after its wait, saying what it was doing', async () => {
    const work = async () => {
      throw new TimeoutError('timeout');
    };
    await expect(whileJetStreamForms('making the consumer SEND/senders', work, () => undefined, 250)).rejects.toThrow(
      'making the consumer SEND/senders: JetStream did not answer within 0.25 s (timeout)',
    );
  });
});

describe('retryInBackground', () => {
  const leaderless = () => new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('tries again while JetStream is unavailable, backing off, until the work is done', async () => {
    const at: number[] = [];
    const started = Date.now();
    let calls = 0;
    const giveUp = jest.fn();
    retryInBackground(
      async () => {
        at.push(Date.now() - started);
        if (++calls === 1) throw leaderless();
        if (calls === 2) throw new TimeoutError('timeout');
        return calls === 4;
      },
      giveUp,
      { firstMs: 100, maxMs: 300 },
    );
    await jest.advanceTimersByTimeAsync(5_000);
    expect(at).toEqual([100, 300, 600, 900]);
    expect(giveUp).not.toHaveBeenCalled();
  });

  it('gives up on any other error, and never runs again once stopped', async () => {
    const giveUp = jest.fn();
    let calls = 0;
    retryInBackground(
      async () => {
        calls++;
        throw new Error('stream configuration update can not change retention');
      },
      giveUp,
      { firstMs: 100, maxMs: 300 },
    );
    await jest.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(1);
    expect(giveUp).toHaveBeenCalledWith(expect.objectContaining({ message: 'stream configuration update can not change retention' }));

    let stoppedCalls = 0;
    const retry = retryInBackground(
      async () => {
        stoppedCalls++;
        return false;
      },
      giveUp,
      { firstMs: 100, maxMs: 300 },
    );
    await jest.advanceTimersByTimeAsync(150);
    retry.stop();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(stoppedCalls).toBe(1);
  });
});

describe('jetStreamUnavailable', () => {
  const apiError = (err_code: number) => new JetStreamApiError({ code: 500, err_code, description: 'x' });

  it('is the meta group leaderless, a request unanswered, or a stream or consumer offline; not what the request asked', () => {
    expect([10008, 10118, 10119].map((code) => jetStreamUnavailable(apiError(code)))).toEqual([true, true, true]);
    expect(jetStreamUnavailable(new TimeoutError('timeout'))).toBe(true);
    expect(jetStreamUnavailable(apiError(10058))).toBe(false);
    expect(jetStreamUnavailable(new Error('no suitable peers for placement'))).toBe(false);
  });
});
