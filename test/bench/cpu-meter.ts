import { readdirSync, readFileSync } from 'node:fs';

/**
 * Where the machine's CPU went during a phase, in CPU-seconds: the server under test (with its
 * cluster workers), this process (the load generator), the Postgres, Redis and NATS servers (by
 * process name; Postgres counts every backend, also those of other clients), and everything else
 * on the machine. Read from /proc, so Linux only; elsewhere the figures are null.
 */
export interface CpuSplit {
  server: number;
  loadGenerator: number;
  postgres: number;
  redis: number;
  nats: number;
  /** Work that is not the bench's: on a shared machine, the noise in the figures. */
  other: number;
  idle: number;
  /** Wall seconds of the phase. */
  seconds: number;
}

const TICK = 100; // USER_HZ, which Linux fixes at 100 for /proc
const SERVICES = { postgres: 'postgres', redis: 'redis-server', nats: 'nats-server' } as const;
type Service = keyof typeof SERVICES;

function machine(): { busy: number; idle: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
    return { busy: (user + nice + system + irq + softirq + steal) / TICK, idle: (idle + iowait) / TICK };
  } catch {
    return null;
  }
}

/** [name, CPU-seconds] of one process, or null once it is gone. */
function stat(pid: number | string): [string, number] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return [text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), (Number(fields[11]) + Number(fields[12])) / TICK];
  } catch {
    return null;
  }
}

/** A process and its descendants (cluster workers). */
function processTree(pid: number): number {
  const own = stat(pid)?.[1] ?? 0;
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return own + children.reduce((sum, child) => sum + processTree(Number(child)), 0);
  } catch {
    return own;
  }
}

/** CPU-seconds of each service's processes, by pid (so processes that appear later count from zero). */
export function services(): Map<string, { service: Service; cpu: number }> {
  const found = new Map<string, { service: Service; cpu: number }>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    const s = stat(pid);
    const service = s && (Object.keys(SERVICES) as Service[]).find((k) => SERVICES[k] === s[0]);
    if (s && service) found.set(pid, { service, cpu: s[1] });
  }
  return found;
}

/** CPU-seconds of one process so far; null once it is gone. */
export function processCpuSeconds(pid: number): number | null {
  return stat(pid)?.[1] ?? null;
}

/** Starts measuring; the returned function ends the measurement. */
export function meterCpu(serverPid: number): () => CpuSplit | null {
  const start = machine();
  if (!start) return () => null;
  const server = processTree(serverPid);
  const before = services();
  const self = process.cpuUsage();
  const at = process.hrtime.bigint();
  return () => {
    const end = machine()!;
    const used = process.cpuUsage(self);
    const split = { postgres: 0, redis: 0, nats: 0 };
    for (const [pid, { service, cpu }] of services()) split[service] += cpu - (before.get(pid)?.cpu ?? 0);
    const serverCpu = processTree(serverPid) - server;
    const loadGenerator = (used.user + used.system) / 1e6;
    const busy = end.busy - start.busy;
    return {
      server: serverCpu,
      loadGenerator,
      ...split,
      other: Math.max(0, busy - serverCpu - loadGenerator - split.postgres - split.redis - split.nats),
      idle: end.idle - start.idle,
      seconds: Number(process.hrtime.bigint() - at) / 1e9,
    };
  };
}

/** Busy share of the whole machine over `ms`, measured before the bench starts anything. */
export async function backgroundLoad(ms = 1000): Promise<number | null> {
  const a = machine();
  await new Promise((r) => setTimeout(r, ms));
  const b = machine();
  if (!a || !b) return null;
  const busy = b.busy - a.busy;
  return busy / (busy + b.idle - a.idle);
}
