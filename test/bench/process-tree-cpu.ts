import { readFileSync } from 'node:fs';

// CPU-seconds of a process tree from /proc, counting also the children that already exited and
// were reaped (their time is in the parent's cutime/cstime). Postfix's master forks and replaces
// its daemons (smtpd, cleanup, smtp, ... each exits after max_use/max_idle), so cpu-meter's
// processTree, which sums the live processes only, would lose their work. Linux only; 0 elsewhere.

const TICK = 100; // USER_HZ

/** utime + stime + cutime + cstime of one process, in seconds; 0 once it is gone. */
function own(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK;
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU-seconds used so far by a process, its live descendants and its reaped ones. */
export function treeCpu(pid: number): number {
  return own(pid) + children(pid).reduce((sum, child) => sum + treeCpu(child), 0);
}

/** CPU-seconds of this process's reaped children (e.g. a load tool the bench ran and waited for). */
export function reapedChildrenCpu(): number {
  try {
    const text = readFileSync('/proc/self/stat', 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / TICK;
  } catch {
    return 0;
  }
}
