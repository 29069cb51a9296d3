import type { Client } from 'pg';
import type { SinkTake } from './bench-mx-sinks';
import type { ServerProcess } from './bench-processes';
import { CpuSplit, meterCpu } from './cpu-meter';
import { options } from './delivery-options';
import type { Submission } from './delivery-load';
import type { SinkProcess } from './delivery-sinks';

// The delivery bench's measurement: the CPU of each process over a phase, and the phase's figures.

export interface PhaseCpu {
  /** CPU-seconds by process over the phase. */
  seconds: { api: number; workers: number; sinks: number; bench: number; postgres: number; redis: number; nats: number; other: number; idle: number };
  wallSeconds: number;
}

/** Meters the API (with Postgres, Redis, NATS, this process and the rest), each worker and the sinks. */
export function meterPhase(api: ServerProcess, workers: ServerProcess[], sinks: SinkProcess): () => PhaseCpu | null {
  const main = meterCpu(api.pid);
  const others = [...workers.map((w) => meterCpu(w.pid)), meterCpu(sinks.pid)];
  return () => {
    const split: CpuSplit | null = main();
    const [sinksCpu, ...workerCpu] = others.map((end) => end()?.server ?? 0).reverse();
    if (!split) return null;
    const workersCpu = workerCpu.reduce((a, b) => a + b, 0);
    return {
      seconds: {
        api: split.server,
        workers: workersCpu,
        sinks: sinksCpu,
        bench: split.loadGenerator,
        postgres: split.postgres,
        redis: split.redis,
        nats: split.nats,
        // cpu-meter's "other" is everything but the API and the services: take the workers and sinks out.
        other: Math.max(0, split.other - workersCpu - sinksCpu),
        idle: split.idle,
      },
      wallSeconds: split.seconds,
    };
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface PhaseResult {
  name: string;
  offered: { requests: number; failures: Record<string, number>; submitSeconds: number; acceptedPerSecond: number; behindMs?: number; rate?: number };
  accepted: number;
  delivered: { sinks: number; postgres: number; perSecond: number; middle80PerSecond: number; seconds: number; firstAfterMs: number };
  /** Send-stream messages published in the phase (the email id is the Nats-Msg-Id) and the consumer's redeliveries. */
  stream: { published: number; redelivered: number };
  /** Of the emails accepted after the warm-up (paced phase), or all (saturation). */
  latencyMs: { p50: number; p90: number; p99: number; max: number; samples: number };
  /** From the batch response to the sink's receipt, on the bench's clock. */
  clientLatencyMs: { p50: number; p99: number; max: number };
  integrity: {
    missingAtSinks: number;
    /** The first ten accepted ids no sink received. */
    missingIds: string[];
    unexpectedAtSinks: number;
    duplicatesAtSinks: number;
    duplicateDeliveredEvents: number;
    unsigned: number;
    plaintext: number;
    unidentified: number;
    /** SMTP connections the sinks accepted during the phase. */
    smtpConnections: number;
    statuses: Record<string, number>;
    notDelivered: { email_id: string; address: string; status: string; last_response: string | null }[];
  };
  cpu: PhaseCpu | null;
  /** The backlog mode: the workers started once every email was on the stream; their resident memory (MiB, /proc) at the end. */
  backlog?: { emails: number; destinations: number; drainSeconds: number; workerMemory: { peakMiB: number; endMiB: number }[] | null };
}

/** A phase's figures and checks: deliveries at the sinks and in Postgres, latencies, integrity. */
export async function analysePhase(
  pg: Client,
  schema: string,
  name: string,
  s: Submission & { behindMs?: number },
  ids: string[],
  take: SinkTake,
  /** The sinks' previous take: the sink process counts over its life. */
  before: SinkTake | null,
  cpu: PhaseCpu | null,
  rate?: number,
): Promise<Omit<PhaseResult, 'stream'>> {
  // A paced phase's first `warmup` seconds open the SMTP connections and warm the JIT: their
  // emails are checked like the others but left out of the latency figures.
  const measuredFrom = rate === undefined ? 0 : s.firstSubmit + options.warmup * 1000;
  const measured = ids.filter((id) => s.accepted.get(id)! >= measuredFrom);
  const receivedAt = new Map<string, number>();
  let unexpected = 0;
  for (const [id, at] of take.receipts) {
    if (!s.accepted.has(id)) unexpected++;
    else if (!receivedAt.has(id)) receivedAt.set(id, at);
  }
  const delta = (key: 'duplicates' | 'unsigned' | 'plaintext' | 'unidentified' | 'connections') => take[key] - (before?.[key] ?? 0);
  const duplicates = delta('duplicates');
  const times = [...receivedAt.values()].sort((a, b) => a - b);
  const lastDelivery = times.at(-1) ?? s.firstAccept;
  const seconds = (lastDelivery - s.firstAccept) / 1000;
  const lo = Math.floor(times.length * 0.1);
  const hi = Math.max(lo, Math.ceil(times.length * 0.9) - 1);
  const middleSeconds = (times[hi]! - times[lo]!) / 1000;
  const clientLatency = [...receivedAt].filter(([id]) => s.accepted.get(id)! >= measuredFrom).map(([id, at]) => at - s.accepted.get(id)!);
  clientLatency.sort((a, b) => a - b);

  const statuses = Object.fromEntries(
    (
      await pg.query<{ status: string; n: string }>(
        `SELECT status, count(*) AS n FROM ${schema}.email_recipients WHERE email_id = ANY($1::uuid[]) GROUP BY status`,
        [ids],
      )
    ).rows.map((r) => [r.status, Number(r.n)]),
  ) as Record<string, number>;
  const notDelivered = (
    await pg.query<{ email_id: string; address: string; status: string; last_response: string | null }>(
      `SELECT email_id, address, status, last_response FROM ${schema}.email_recipients
        WHERE email_id = ANY($1::uuid[]) AND status <> 'delivered' ORDER BY status, email_id LIMIT 10`,
      [ids],
    )
  ).rows;
  const latencyRows = (
    await pg.query<{ ms: number; n: string }>(
      `SELECT extract(epoch FROM min(ev.created_at) - e.created_at) * 1000 AS ms, count(*) AS n
         FROM ${schema}.email_events ev JOIN ${schema}.emails e ON e.id = ev.email_id
        WHERE ev.type = 'email.delivered' AND ev.email_id = ANY($1::uuid[])
        GROUP BY e.id, e.created_at`,
      [measured],
    )
  ).rows;
  const latency = latencyRows.map((r) => Number(r.ms)).sort((a, b) => a - b);
  const submitSeconds = (s.lastAccept - s.firstSubmit) / 1000;
  return {
    name,
    offered: {
      requests: s.requests,
      failures: s.failures,
      submitSeconds,
      acceptedPerSecond: ids.length / submitSeconds,
      ...(s.behindMs !== undefined ? { behindMs: s.behindMs } : {}),
      ...(rate !== undefined ? { rate } : {}),
    },
    accepted: ids.length,
    delivered: {
      sinks: receivedAt.size,
      postgres: statuses.delivered ?? 0,
      perSecond: receivedAt.size / seconds,
      middle80PerSecond: middleSeconds > 0 ? (hi - lo) / middleSeconds : NaN,
      seconds,
      firstAfterMs: (times[0] ?? NaN) - s.firstAccept,
    },
    latencyMs: {
      p50: percentile(latency, 50),
      p90: percentile(latency, 90),
      p99: percentile(latency, 99),
      max: latency.at(-1) ?? NaN,
      samples: latency.length,
    },
    clientLatencyMs: { p50: percentile(clientLatency, 50), p99: percentile(clientLatency, 99), max: clientLatency.at(-1) ?? NaN },
    integrity: {
      missingAtSinks: ids.length - receivedAt.size,
      missingIds: ids.filter((id) => !receivedAt.has(id)).slice(0, 10),
      unexpectedAtSinks: unexpected,
      duplicatesAtSinks: duplicates,
      duplicateDeliveredEvents: latencyRows.reduce((sum, r) => sum + Number(r.n) - 1, 0),
      unsigned: delta('unsigned'),
      plaintext: delta('plaintext'),
      unidentified: delta('unidentified'),
      smtpConnections: delta('connections'),
      statuses,
      notDelivered,
    },
    cpu,
  };
}
