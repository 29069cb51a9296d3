// The floor the API and tracking benches compare Herald with: Fastify alone, one trivial JSON POST
// route (and one GET redirect for the tracking bench), on
// the same machine and under the same load. PORT and WORKERS come from the bench; with WORKERS
// above 1 it runs under node:cluster as the Herald API does. Tells its parent "listening" over IPC.
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 0);
const workers = Number(process.env.WORKERS ?? 1);

async function serve(): Promise<void> {
  const app = Fastify({ logger: false, bodyLimit: 60 * 1024 * 1024 });
  // Fastify parses the JSON body before the handler runs; the answer has the shape of Herald's.
  app.post('/emails', async () => ({ id: randomUUID() }));
  // The tracking bench's floor: a GET answered with a redirect, as a click on a tracked link is.
  app.get('/t/c/*', (_request, reply) => reply.header('cache-control', 'no-store').redirect('https://shop.example/landing?from=email', 302));
  await app.listen({ port, host: '127.0.0.1' });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (workers > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('listening', () => {
    if (++listening === workers) process.send?.('listening');
  });
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    cluster.on('exit', () => {
      if (!Object.keys(cluster.workers ?? {}).length) process.exit(0);
    });
  });
} else {
  serve().then(
    () => (cluster.isWorker ? undefined : process.send?.('listening')),
    (error: unknown) => {
      process.stderr.write(`bare-fastify: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
