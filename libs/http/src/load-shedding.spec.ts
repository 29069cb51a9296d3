import Fastify, { type FastifyInstance } from 'fastify';
import { installLoadShedding, type LoadShedder, type LoadSheddingOptions } from './load-shedding';

/** A real Fastify on a free port with a route whose answers the test releases, shedder installed. */
async function server(options: Partial<LoadSheddingOptions>) {
  // Every connection closed on close(), open or idle: an aborted request leaves none waiting.
  const fastify: FastifyInstance = Fastify({ forceCloseConnections: true });
  const shedder: LoadShedder = installLoadShedding(fastify, {
    maxInFlight: 0,
    maxEventLoopDelayMs: 0,
    retryAfterSeconds: 1,
    exempt: (url) => url.startsWith('/health/'),
    ...options,
  });
  const waiting: (() => void)[] = [];
  fastify.get('/slow', () => new Promise<string>((resolve) => waiting.push(() => resolve('done'))));
  fastify.get('/fast', async () => 'done');
  fastify.get('/health/ready', async () => 'ready');
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  return {
    shedder,
    get: (path: string, signal?: AbortSignal) => fetch(`${url}${path}`, { signal }),
    release: () => waiting.splice(0).forEach((answer) => answer()),
    waiting: () => waiting.length,
    close: async () => {
      shedder.stop();
      await fastify.close();
    },
  };
}

const until = async (condition: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('installLoadShedding', () => {
  it('refuses a request past the in-flight limit with 503 and Retry-After, never a health probe, and admits again once one ends', async () => {
    const s = await server({ maxInFlight: 2 });
    try {
      const first = [s.get('/slow'), s.get('/slow')];
      await until(() => s.waiting() === 2);
      const refused = await s.get('/fast');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toEqual({
        statusCode: 503,
        name: 'service_unavailable',
        message: expect.stringMatching(/^Herald is over its capacity right now \(2 requests in progress\); nothing was done\./),
      });
      expect((await s.get('/health/ready')).status).toBe(200);
      s.release();
      expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
      await until(() => s.shedder.inFlight() === 0);
      expect((await s.get('/fast')).status).toBe(200);
      expect(s.shedder.refused).toEqual({ in_flight: 1, event_loop: 0 });
    } finally {
      await s.close();
    }
  });

  it('counts a request its client abandons as ended', async () => {
    const s = await server({ maxInFlight: 1 });
    try {
      const abort = new AbortController();
      const abandoned = s.get('/slow', abort.signal).catch((error: Error) => error.name);
      await until(() => s.waiting() === 1);
      expect(s.shedder.inFlight()).toBe(1);
      abort.abort();
      expect(await abandoned).toBe('AbortError');
      await until(() => s.shedder.inFlight() === 0);
      s.release();
    } finally {
      await s.close();
    }
  });

  it('refuses new requests while the event loop is saturated, and admits them once it is not', async () => {
    const s = await server({ maxEventLoopDelayMs: 50, windowMs: 1_000 });
    try {
      // Saturate the loop for 1.3 s in 100 ms slices: every delay sample is about 100 ms.
      const end = Date.now() + 1_300;
      while (Date.now() < end) {
        const slice = Date.now() + 100;
        while (Date.now() < slice);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const refused = await s.get('/fast');
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { message: string }).message).toMatch(/its event loop is saturated/);
      await until(() => s.shedder.refused.event_loop >= 1);
      // A quiet window later the loop is free again.
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect((await s.get('/fast')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
