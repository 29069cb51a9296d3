import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Client } from 'pg';

// CPU-seconds of the Postgres backends that serve given processes (the API, a worker), apart from
// every other client of the shared server: cpu-meter counts all Postgres processes, which on this
// machine includes other benches and test suites. A backend is matched to a process through its
// TCP connection: the process's socket inodes (/proc/<pid>/fd), their local ports (/proc/net/tcp)
// and pg_stat_activity.client_port. Pools open and close connections while a phase runs, so the
// meter samples every 250 ms, keeps the last figure of a backend that went away and counts a
// backend opened during the phase from zero. Linux only.

const TICK = 100; // USER_HZ
const POSTGRES_PORT = 5432;

function cpuOf(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return null;
  }
}

/** Socket inodes of a process and its descendants (cluster workers). */
function socketInodes(pid: number, into = new Set<string>()): Set<string> {
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) into.add(match[1]!);
      } catch {
        // closed meanwhile
      }
    }
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
      socketInodes(Number(child), into);
  } catch {
    // gone
  }
  return into;
}

/** Local ports of these processes' TCP connections to Postgres. */
function postgresClientPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) socketInodes(pid, inodes);
  const ports: number[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      const remotePort = parseInt(f[2]!.split(':')[1]!, 16);
      if (remotePort === POSTGRES_PORT) ports.push(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/** Starts sampling the backends of `pids`; `stop` answers their CPU-seconds since the start. */
export function meterBackends(pg: Client, pids: number[]): { stop(): Promise<number> } {
  const start = new Map<number, number>();
  const last = new Map<number, number>();
  let first = true;
  const sample = async () => {
    const ports = postgresClientPorts(pids);
    const { rows } = ports.length
      ? await pg.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])`, [ports])
      : { rows: [] };
    for (const { pid } of rows) {
      const cpu = cpuOf(pid);
      if (cpu === null) continue;
      // A backend first seen later was opened during the phase: all its work is the phase's.
      if (!start.has(pid)) start.set(pid, first ? cpu : 0);
      last.set(pid, cpu);
    }
    first = false;
  };
  let sampling = sample();
  const timer = setInterval(() => {
    sampling = sampling.then(sample, sample);
  }, 250);
  return {
    async stop() {
      clearInterval(timer);
      await sampling.catch(() => undefined);
      await sample();
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - start.get(pid)!;
      return total;
    },
  };
}
