import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { processCpuSeconds, services } from '../bench/cpu-meter';

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

/** The test process's own state over one window: how long its event loop stalled, and its heap. */
export interface HarnessWindow {
  window: number;
  delayP99Ms: number;
  delayMaxMs: number;
  heapUsedMiB: number;
  rssMiB: number;
}

/**
 * Watches the soak's own process (the load generator, the MX sinks and the webhook receiver all
 * run in it): a stall of its event loop delays the sinks' answers and the stamping of accepts, so
 * it shows in accept-to-delivered as if it were Herald's. Read per window beside the p99s, it
 * tells a drift of the harness from a drift of Herald.
 */
export class HarnessMonitor {
  readonly windows: HarnessWindow[] = [];
  private readonly delay = monitorEventLoopDelay({ resolution: 10 });
  private timer: NodeJS.Timeout | null = null;

  start(windowMs: number): void {
    this.delay.enable();
    this.timer = setInterval(() => this.close(), windowMs);
  }

  /** Ends the current window (also the last, partial one) and starts the next. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.close();
    this.delay.disable();
  }

  lines(): string[] {
    return this.windows.map(
      (w) =>
        `  window ${w.window}: event-loop delay p99 ${w.delayP99Ms} ms, max ${w.delayMaxMs} ms; heap used ${w.heapUsedMiB} MiB, resident ${w.rssMiB} MiB`,
    );
  }

  private close(): void {
    const memory = process.memoryUsage();
    this.windows.push({
      window: this.windows.length,
      delayP99Ms: Math.round(this.delay.percentile(99) / 1e6),
      delayMaxMs: Math.round(this.delay.max / 1e6),
      heapUsedMiB: Math.round(memory.heapUsed / 2 ** 20),
      rssMiB: Math.round(memory.rss / 2 ** 20),
    });
    this.delay.reset();
  }
}

/** CPU used in one window, in % of one core, by role (every process of it) and service. */
export type CpuWindow = { window: number } & Record<string, number>;

/**
 * CPU by window: each role's processes (a restarted role's new process counts from its start, a
 * killed one up to its last reading), the Postgres, NATS and Redis servers, and this process. At
 * a steady offered load, a share that grows from window to window is a cost per email that grows
 * with time: it says which process a drift of the p99 comes from.
 */
export class CpuByWindow {
  readonly windows: CpuWindow[] = [];
  private readonly last = new Map<string, { group: string; cpu: number }>();
  private readonly atWindowStart = new Map<string, number>();
  private startedAt = performance.now();
  private self = process.cpuUsage();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly roles: () => readonly { role: string; pid: number }[]) {}

  start(windowMs: number): void {
    this.sample();
    for (const [key, { cpu }] of this.last) this.atWindowStart.set(key, cpu);
    this.startedAt = performance.now();
    this.self = process.cpuUsage();
    this.timer = setInterval(() => this.close(), windowMs);
  }

  /** Ends the last (partial) window. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.close();
  }

  /** Reads every process; call often enough (the memory sampler's 15 s) that a killed one loses little. */
  sample(): void {
    for (const { role, pid } of this.roles()) {
      const cpu = processCpuSeconds(pid);
      if (cpu !== null) this.last.set(`role:${pid}`, { group: role, cpu });
    }
    for (const [pid, { service, cpu }] of services()) this.last.set(`service:${pid}`, { group: service, cpu });
  }

  private close(): void {
    this.sample();
    const seconds = (performance.now() - this.startedAt) / 1000;
    const used: Record<string, number> = {};
    for (const [key, { group, cpu }] of this.last) used[group] = (used[group] ?? 0) + cpu - (this.atWindowStart.get(key) ?? 0);
    const self = process.cpuUsage(this.self);
    used.harness = (self.user + self.system) / 1e6;
    const window: CpuWindow = { window: this.windows.length } as CpuWindow;
    for (const [group, cpu] of Object.entries(used)) window[group] = Math.round((100 * cpu) / seconds);
    this.windows.push(window);
    for (const [key, { cpu }] of this.last) this.atWindowStart.set(key, cpu);
    this.startedAt = performance.now();
    this.self = process.cpuUsage();
  }

  lines(): string[] {
    return this.windows.map(({ window, ...groups }) => {
      const parts = Object.entries(groups)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([group, share]) => `${group} ${share}%`);
      return `  window ${window}: ${parts.join(', ')}`;
    });
  }
}
