import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FaultTeam, FaultWorld } from './fault-world';

/** One POST /emails of a load, with its own Idempotency-Key. */
export interface Attempt {
  key: string;
  to: string;
  /** When it was due and when it was answered (ms, performance.now()). */
  startedAt: number;
  latencyMs: number;
  /** 0: no answer (a reset or the client's timeout). */
  status: number;
  name?: string;
  retryAfter: string | null;
  /** The email's id, on a 200. */
  id?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** POST /emails with the key; latency measured from `due` (an open-loop request waits for nothing but its time). */
export async function attempt(world: FaultWorld, team: FaultTeam, key: string, to: string, due = performance.now()): Promise<Attempt> {
  const reply = await world.call(
    team.token,
    'POST',
    '/emails',
    { from: team.from, to, subject: key, text: 'burst' },
    { 'idempotency-key': key },
    30_000,
  );
  return {
    key,
    to,
    startedAt: due,
    latencyMs: performance.now() - due,
    status: reply.status,
    name: reply.body?.name,
    retryAfter: reply.headers?.get('retry-after') ?? null,
    id: reply.status === 200 ? reply.body.id : undefined,
  };
}

/** `clients` loops sending one after another for `ms`: the closed-loop rate the API sustains. */
export async function closedLoop(world: FaultWorld, team: FaultTeam, to: (n: number) => string, clients: number, ms: number): Promise<Attempt[]> {
  const done: Attempt[] = [];
  const until = performance.now() + ms;
  let n = 0;
  const client = async () => {
    while (performance.now() < until) done.push(await attempt(world, team, randomUUID(), to(n++)));
  };
  await Promise.all(Array.from({ length: clients }, client));
  return done;
}

/**
 * An open loop at `perSecond` for `ms`: requests start on their schedule whether or not the
 * earlier ones were answered, as independent clients do. Resolves once every one is answered.
 */
export async function openLoop(world: FaultWorld, team: FaultTeam, to: (n: number) => string, perSecond: number, ms: number): Promise<Attempt[]> {
  const total = Math.round((perSecond * ms) / 1000);
  const started = performance.now();
  const pending: Promise<Attempt>[] = [];
  while (pending.length < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - started) * perSecond) / 1000) + 1);
    while (pending.length < due) {
      const n = pending.length;
      pending.push(attempt(world, team, randomUUID(), to(n), started + (n * 1000) / perSecond));
    }
    await sleep(5);
  }
  return Promise.all(pending);
}

/** The q-quantile (0..1) of the values, nearest rank; 0 for none. */
export function quantile(values: number[], q: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** Attempts counted by status and error name, e.g. `{ '200': 97, '503 service_unavailable': 703 }`. */
export function byStatus(attempts: Attempt[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of attempts) {
    const label = a.status === 200 ? '200' : `${a.status} ${a.name ?? ''}`.trim();
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}
