import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// The soak's report (test/faults/soak.soak-spec.ts): p99 accept-to-delivered per window, its drift,
// and each role process's memory growth, computed from what the soak recorded.

export interface RoleSample {
  role: string;
  pid: number;
  startedAt: number;
  samples: MemorySample[];
}

/** Resident memory from /proc; the V8 heap in use and the memory outside it from the role's own /metrics, when it answered. */
export interface MemorySample {
  at: number;
  rssMiB: number;
  heapUsedMiB?: number;
  externalMiB?: number;
}

export function rssMiB(pid: number): number | null {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Math.round(Number(kb[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * The V8 heap in use and the external memory (Buffers and the like) of a role process, read from
 * the prom-client gauges on its ops port (found among the ports it listens on, by `ss`): what
 * tells a growing heap from growing native memory. Null when nothing answered.
 */
export async function heapOf(pid: number): Promise<Pick<MemorySample, 'heapUsedMiB' | 'externalMiB'> | null> {
  let listing: string;
  try {
    listing = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  } catch {
    return null;
  }
  const ports = listing
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => Number(/:(\d+)\s/.exec(line)?.[1]))
    .filter((port) => port > 0);
  for (const port of ports) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => (r.ok ? r.text() : ''))
      .catch(() => '');
    const gauge = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]);
    const used = gauge('nodejs_heap_size_used_bytes');
    if (!Number.isFinite(used)) continue;
    return { heapUsedMiB: Math.round(used / 2 ** 20), externalMiB: Math.round(gauge('nodejs_external_memory_bytes') / 2 ** 20) };
  }
  return null;
}

/** One line per role process: its samples every `everyMs`, as rss/heap used/external MiB. */
export function memorySeries(memory: readonly RoleSample[], everyMs: number): string[] {
  return memory.map((m) => {
    let next = 0;
    const points: string[] = [];
    for (const s of m.samples) {
      const age = s.at - m.startedAt;
      if (age < next) continue;
      next = age + everyMs;
      points.push(`${(age / 60_000).toFixed(1)}m ${s.rssMiB}/${s.heapUsedMiB ?? '?'}/${s.externalMiB ?? '?'}`);
    }
    return `  ${m.role} pid ${m.pid}: ${points.join(', ')}`;
  });
}

export function p99(values: number[]): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

/** A fault as the soak injected it: when (seconds into the load) and when it was healed. */
export interface Injection {
  at: number;
  fault: string;
  healedAt?: number;
}

/**
 * Whether an email accepted at `acceptedAt` paid for a fault: accepted from `beforeMs` before one
 * to `afterMs` after its heal (the catch-up); a fault not healed counts until `endS`.
 */
export function disturbedBy(injected: readonly Injection[], loadStart: number, beforeMs: number, afterMs: number, endS: number) {
  return (acceptedAt: number) =>
    injected.some((f) => acceptedAt >= loadStart + f.at * 1000 - beforeMs && acceptedAt <= loadStart + (f.healedAt ?? endS) * 1000 + afterMs);
}

export interface LatencyWindow {
  window: number;
  emails: number;
  p99Ms: number;
  firstAttempt: number;
  firstP99Ms: number;
  steady: number;
  steadyP99Ms: number;
}

/**
 * The p99 accept-to-delivered (first arrival at a sink) of each window, by when the email was
 * accepted: over every email, over those delivered at their first attempt (not in `retried`), and
 * over the steady state (not `disturbed`).
 */
export function latencyWindows(
  sends: readonly { id?: string; to: string; acceptedAt?: number }[],
  firstArrival: ReadonlyMap<string, number>,
  {
    loadStart,
    windowMs,
    retried,
    disturbed,
  }: { loadStart: number; windowMs: number; retried: ReadonlySet<string>; disturbed: (acceptedAt: number) => boolean },
): LatencyWindow[] {
  const windows = new Map<number, { all: number[]; first: number[]; steady: number[] }>();
  for (const s of sends) {
    const at = s.acceptedAt && firstArrival.get(s.to);
    if (!s.acceptedAt || !at) continue;
    const window = Math.floor((s.acceptedAt - loadStart) / windowMs);
    if (!windows.has(window)) windows.set(window, { all: [], first: [], steady: [] });
    const latency = Math.max(0, at - s.acceptedAt);
    windows.get(window)!.all.push(latency);
    if (!retried.has(s.id!)) windows.get(window)!.first.push(latency);
    if (!disturbed(s.acceptedAt)) windows.get(window)!.steady.push(latency);
  }
  return [...windows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([window, { all, first, steady }]) => ({
      window,
      emails: all.length,
      p99Ms: p99(all),
      firstAttempt: first.length,
      firstP99Ms: p99(first),
      steady: steady.length,
      steadyP99Ms: p99(steady),
    }));
}

/** The largest over the smallest of the windows' p99s that have one. */
export function driftOf(values: number[]): number {
  const known = values.filter((v) => !Number.isNaN(v));
  return known.length ? Math.max(...known) / Math.max(1, Math.min(...known)) : NaN;
}

/** Each role process's resident memory at start, once warm and at the end; its growth from warm if it lived `judgedMs`. */
export function memoryGrowth(memory: readonly RoleSample[], warmMs: number, judgedMs: number) {
  return memory.map((m) => {
    const warm = m.samples.find((s) => s.at - m.startedAt >= warmMs);
    const last = m.samples[m.samples.length - 1];
    const lived = (last?.at ?? m.startedAt) - m.startedAt;
    return {
      role: m.role,
      pid: m.pid,
      livedMin: Math.round(lived / 6_000) / 10,
      startMiB: m.samples[0]?.rssMiB ?? null,
      warmMiB: warm?.rssMiB ?? null,
      endMiB: last?.rssMiB ?? null,
      growth: warm && last && lived >= judgedMs ? Math.round(((last.rssMiB - warm.rssMiB) / warm.rssMiB) * 1000) / 10 : null,
    };
  });
}
