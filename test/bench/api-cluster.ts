// `herald api` under node:cluster, for the bench's `--workers N` comparison: the primary forks
// BENCH_API_WORKERS processes of the unchanged `bin/herald.js api`, which share API_PORT (the
// primary hands out connections round-robin). It tells its parent when every worker listens and
// forwards SIGTERM, so each worker drains as `herald api` does. The CLI has no such mode yet;
// this is what one would do, kept here so the measurement can be repeated.
import cluster from 'node:cluster';
import { HERALD_BIN } from './bench-processes';

const workers = Number(process.env.BENCH_API_WORKERS ?? 2);
let stopping = false;
let listening = 0;

cluster.setupPrimary({ exec: HERALD_BIN, args: ['api'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
for (let i = 0; i < workers; i++) cluster.fork();

cluster.on('listening', () => {
  if (++listening === workers) process.send?.('listening');
});
cluster.on('exit', (worker, code, signal) => {
  if (!stopping) {
    process.stderr.write(`api-cluster: worker ${worker.process.pid} exited (${signal ?? code}); stopping\n`);
    stop(1);
  } else if (!Object.keys(cluster.workers ?? {}).length) {
    process.exit(0);
  }
});

function stop(code = 0): void {
  if (stopping) return;
  stopping = true;
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  if (!Object.keys(cluster.workers ?? {}).length) process.exit(code);
}
process.once('SIGTERM', () => stop());
process.once('SIGINT', () => stop());
