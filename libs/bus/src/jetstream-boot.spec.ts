import { whileJetStreamForms } from './jetstream-boot';

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
