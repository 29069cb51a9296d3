import type { JetStreamContext, SendChunk, SendCommand } from '@herald/bus';
import type { DeliveryService } from '@herald/delivery';
import { SendChunkHandler } from './send-chunk.handler';

const TEAM = '0192f0c4-1c2a-7000-8000-000000000001';
const id = (n: number) => `0192f0c4-1c2a-7000-8000-${String(n).padStart(12, '0')}`;
const chunk = (n: number): SendChunk => ({
  teamId: TEAM,
  region: 'us-east-1',
  emails: Array.from({ length: n }, (_, i) => ({ id: id(i + 10), ...(i === 0 && { domains: ['inbox.test'] }) })),
});

/** What a stand-in DeliveryService does with each email: claim it, postpone it, or fail before or after its claim. */
type Fate = 'claim' | 'postpone' | 'fail' | 'fail after claim';

function setup(fates: (command: SendCommand) => Fate, concurrency = 3) {
  const handled: SendCommand[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const delivery = {
    handle: async (command: SendCommand, claimed: () => void) => {
      handled.push(command);
      mostAtOnce = Math.max(mostAtOnce, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      const fate = fates(command);
      if (fate === 'fail') throw new Error(`postgres down for ${command.emailId}`);
      if (fate === 'postpone') return;
      claimed();
      if (fate === 'fail after claim') throw new Error('the MX build failed');
    },
  } as unknown as DeliveryService;
  const ctx = { ack: jest.fn(), working: jest.fn() } as unknown as JetStreamContext & { ack: jest.Mock };
  return { handler: new SendChunkHandler(delivery, concurrency), ctx, handled, mostAtOnce: () => mostAtOnce };
}

describe('SendChunkHandler', () => {
  it('hands each email to the pipeline as its own send command, a few at a time, and acks once all are claimed or postponed', async () => {
    const { handler, ctx, handled, mostAtOnce } = setup((c) => (c.emailId === id(12) ? 'postpone' : 'claim'));
    await handler.handle(chunk(10), ctx);
    expect(handled.map((c) => c.emailId)).toEqual(Array.from({ length: 10 }, (_, i) => id(i + 10)));
    expect(handled[0]).toEqual({ emailId: id(10), teamId: TEAM, region: 'us-east-1', domains: ['inbox.test'] });
    expect(handled[1]).toEqual({ emailId: id(11), teamId: TEAM, region: 'us-east-1' });
    expect(mostAtOnce()).toBe(3);
    expect(ctx.ack).toHaveBeenCalledTimes(1);
  });

  it('leaves the chunk unacked and rejects when an email fails before its claim, after the others were handled', async () => {
    const { handler, ctx, handled } = setup((c) => (c.emailId === id(11) ? 'fail' : 'claim'));
    await expect(handler.handle(chunk(5), ctx)).rejects.toThrow(`postgres down for ${id(11)}`);
    expect(handled).toHaveLength(5);
    expect(ctx.ack).not.toHaveBeenCalled();
  });

  it("acks a chunk whose email failed after its claim: that email's lease answers for it", async () => {
    const { handler, ctx } = setup((c) => (c.emailId === id(13) ? 'fail after claim' : 'claim'));
    await handler.handle(chunk(5), ctx);
    expect(ctx.ack).toHaveBeenCalledTimes(1);
  });

  it('terminates a chunk that is not one (a validation error)', async () => {
    const { handler, ctx, handled } = setup(() => 'claim');
    await expect(handler.handle({ teamId: TEAM, region: 'us-east-1', emails: [] }, ctx)).rejects.toMatchObject({ code: 'validation_error' });
    await expect(handler.handle({ ...chunk(1), emails: [{ id: 'not-a-uuid' }] }, ctx)).rejects.toMatchObject({ code: 'validation_error' });
    expect(handled).toHaveLength(0);
  });
});
