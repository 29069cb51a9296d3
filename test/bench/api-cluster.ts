// `herald api` under node:cluster, for the bench's `--workers N` comparison. The primary forks
// BENCH_API_WORKERS workers; each runs the unchanged `bin/herald.js api`, and they share API_PORT
// (the primary hands out connections round-robin). The primary tells its parent once every worker
// listens, and forwards SIGTERM so each worker drains as `herald api` does. The CLI has no such
// mode; this is what one would look like, kept here so the measurement can be repeated.
import cluster from 'node:cluster';
import { join } from 'node:path';
import { HERALD_BIN } from './bench-processes';

function worker(): void {
  // The IPC channel would keep a worker alive after `herald api` closed on SIGTERM; unreferenced,
  // the worker exits as a lone `herald api` does, once its connections are closed.
  process.channel?.unref();
  process.argv.splice(1, process.argv.length - 1, HERALD_BIN, 'api');
  require(HERALD_BIN);
}

function primary(workers: number): void {
  let stopping = false;
  let listening = 0;
  const alive = () => Object.keys(cluster.workers ?? {}).length;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    if (!alive()) process.exit(code);
  };

  cluster.setupPrimary({ exec: join(__dirname, 'api-cluster.js'), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('listening', () => {
    if (++listening === workers) process.send?.('listening');
  });
  cluster.on('exit', (w, code, signal) => {
    if (!stopping) {
      process.stderr.write(`api-cluster: worker ${w.process.pid} exited (${signal ?? code}); stopping\n`);
      stop(1);
    } else if (!alive()) {
      process.exit(0);
    }
  });
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
}

if (cluster.isWorker) worker();
else primary(Number(process.env.BENCH_API_WORKERS ?? 2));
