import { readdirSync, readFileSync } from 'node:fs';

/** The API pod's memory limit (k8s overlays): what the bench's resident figure is compared with. */
export const API_POD_LIMIT_MIB = 512;

export interface ResidentMemory {
  /** Peak resident set (VmHWM) since the process started, summed over it and its children, MiB. */
  peakMiB: number;
  /** Resident set now (VmRSS), summed likewise, MiB. */
  nowMiB: number;
  pids: number[];
}

/** A process's and its children's resident memory from /proc (Linux); null elsewhere. */
export function residentMemory(pid: number): ResidentMemory | null {
  try {
    const pids = [pid, ...childrenOf(pid)];
    let peak = 0;
    let now = 0;
    for (const p of pids) {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      peak += kib(status, 'VmHWM');
      now += kib(status, 'VmRSS');
    }
    return { peakMiB: Math.round(peak / 1024), nowMiB: Math.round(now / 1024), pids };
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

function kib(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}
