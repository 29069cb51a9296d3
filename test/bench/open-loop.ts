import { Agent, request } from 'node:http';

/** One request of an open loop: where it goes and what it carries. */
export interface OpenLoopRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface OpenLoopResult {
  /** Requests sent (every one scheduled in the run). */
  requests: number;
  /** Answers by status; 0 counts errors (refused, reset, timed out). */
  statuses: Record<number, number>;
  /** From each request's scheduled start to its last byte, so a slow answer delays no one's clock. */
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Requests that started late because the generator itself fell behind its schedule (its event loop). */
  lateStarts: number;
}

/**
 * An open-loop load: request i is due at start + i / rate, whatever happened to the ones before,
 * and its latency is counted from when it was due (no coordinated omission). autocannon's
 * `overallRate` is not this: each connection sends back to back until its share of the second is
 * used, so a "200 requests/s" run is a burst of 20-way concurrency at each second's start, then
 * silence, and its latencies measure the burst.
 */
export async function openLoop(url: string, rate: number, seconds: number, next: (i: number) => OpenLoopRequest): Promise<OpenLoopResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(url);
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let lateStarts = 0;
  const inFlight: Promise<void>[] = [];
  const start = performance.now() + 20;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    else if (wait < -5) lateStarts++;
    const spec = next(i);
    inFlight.push(
      send(agent, target, spec).then((status) => {
        latencies.push(performance.now() - due);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] * 10) / 10;
  return { requests: total, statuses, latencyMs: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) }, lateStarts };
}

/** One request; resolves with its status once the body is read, or 0 on an error or after 10 s. */
function send(agent: Agent, target: URL, spec: OpenLoopRequest): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { agent, host: target.hostname, port: target.port, method: spec.method, path: spec.path, headers: spec.headers, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(0));
    req.end(spec.body);
  });
}
