import type { Client } from 'pg';
import { meterBackends } from './backend-cpu';
import { meterCpu } from './cpu-meter';
import { treeCpu } from './process-tree-cpu';

// The broadcasts bench's CPU figures of a phase: what the API used, what its own Postgres
// backends used (not the other clients of the shared server), the NATS server (shared: an upper
// bound), the worker(s) delivering meanwhile, and everything else on the machine (the noise).

export interface BroadcastPhaseCpu {
  /** CPU-seconds over the phase. */
  api: number;
  apiPostgres: number;
  nats: number;
  workers: number;
  other: number;
  wallSeconds: number;
}

export function meterBroadcastPhase(pg: Client, apiPid: number, workerPids: number[]): () => Promise<BroadcastPhaseCpu | null> {
  const machine = meterCpu(apiPid);
  const backends = meterBackends(pg, [apiPid]);
  const workers0 = workerPids.reduce((sum, pid) => sum + treeCpu(pid), 0);
  return async () => {
    const split = machine();
    const workers = workerPids.reduce((sum, pid) => sum + treeCpu(pid), 0) - workers0;
    const apiPostgres = await backends.stop();
    if (!split) return null;
    return {
      api: split.server,
      apiPostgres,
      nats: split.nats,
      workers,
      other: Math.max(0, split.other + split.postgres - apiPostgres - workers),
      wallSeconds: split.seconds,
    };
  };
}

/**
 * The CPU per operation of both phases as a table that compare-runs reads (µs; `other` is the
 * rest of the machine, as a share of one core: the noise, not judged).
 */
export function cpuTable(rows: { label: string; cpu: BroadcastPhaseCpu | null; operations: number }[]): string[] {
  const pad = (v: string, n = 9) => v.padStart(n);
  const lines = [`${' '.repeat(28)}${['api', 'postgres', 'nats', 'worker', 'other'].map((c) => pad(c)).join('')}`];
  for (const { label, cpu, operations } of rows) {
    if (!cpu || operations === 0) continue;
    const us = (seconds: number) => pad(String(Math.round((seconds * 1e6) / operations)));
    const other = pad(`${Math.round((cpu.other / cpu.wallSeconds) * 100)}%`);
    lines.push(`  ${label.padEnd(26)}${us(cpu.api)}${us(cpu.apiPostgres)}${us(cpu.nats)}${us(cpu.workers)}${other}`);
  }
  return lines;
}
