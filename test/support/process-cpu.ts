import { readFileSync } from 'node:fs';

/** CPU seconds a process has used (user + system), from /proc; NaN when it is gone. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** `api 4.7 s, worker 2.8 s, jest 9.8 s`: each process's CPU so far, this one's last. */
export function cpuSummary(roles: Record<string, number | undefined>): string {
  return Object.entries({ ...roles, jest: process.pid })
    .map(([role, pid]) => `${role} ${cpuSeconds(pid).toFixed(1)} s`)
    .join(', ');
}
