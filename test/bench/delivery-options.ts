// The delivery bench's settings: its command-line options, targets and the names of its world.
import { deployedNodeOptions } from '@herald/testing';
import { option } from './bench-options';

export const TARGETS = { deliveredPerSecond: 1_500, p99Ms: 500 };
export const BATCH_SIZE = 100;
/** Issue 16: a worker draining a 50,000-email backlog over 500 destinations stays under this resident size. */
export const WORKER_MEMORY_TARGET_MIB = 300;
/** Final statuses of a recipient; `queued`, `sending` and `deferred` are still on their way. */
export const FINAL = ['delivered', 'bounced', 'failed', 'suppressed'];
/** A phase gives up waiting when neither the sinks nor Postgres made progress for this long. */
export const STALL_MS = 30_000;
/** The workers' durable consumer of the send stream (SENDERS_DURABLE in apps/worker/src/worker.app.ts). */
export const SENDERS_DURABLE = 'senders';

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
if (only !== null && only !== 'saturation' && only !== 'latency' && only !== 'backlog')
  throw new Error('--only takes saturation, latency or backlog');
export const options = {
  emails: option('emails', 20_000),
  rate: option('rate', 500),
  duration: option('duration', 15),
  warmup: option('warmup', 2),
  workers: option('workers', 1),
  sinks: option('sinks', 10),
  connections: option('connections', 8),
  only,
  /** --only backlog: emails queued before the workers start, and recipient domains with an MX host each. */
  backlog: option('backlog', 50_000),
  destinations: option('destinations', 500),
  profile: process.argv.includes('--profile'),
  /** Workers without their deployment's NODE_OPTIONS: V8 then sizes its heap for this machine. */
  machineHeap: process.argv.includes('--machine-heap'),
  keep: process.argv.includes('--keep'),
  save: !process.argv.includes('--no-save'),
};

/** The workers run as their pod runs them: with the NODE_OPTIONS of k8s/base/worker.yaml (its heap ceiling). */
export const WORKER_NODE_OPTIONS = options.machineHeap ? null : deployedNodeOptions('worker');

/** Recipient domains: 50 sharing the sinks' MX hosts; in the backlog mode one per destination (its own MX host). */
export const DOMAINS = options.only === 'backlog' ? options.destinations : 50;
export const domainName = (i: number) => `d${String(i + 1).padStart(2, '0')}.bench.test`;
export const sinkHost = (i: number) => `127.0.0.${i + 2}`;
export const sinkMx = (i: number) => `mx.sink${String(i + 1).padStart(2, '0')}.bench.test`;
/** The backlog mode's MX host of recipient domain `d`: a destination of its own, on sink `d % sinks`. */
export const domainMx = (d: number) => `mx.${domainName(d)}`;
