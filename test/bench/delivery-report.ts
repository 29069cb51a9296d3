import type { PhaseResult } from './delivery-measure';
import { DOMAINS, options, TARGETS, WORKER_MEMORY_TARGET_MIB } from './delivery-options';

// The delivery bench's printed table and its verdict.

const n = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';

export function failed(r: PhaseResult): boolean {
  const i = r.integrity;
  return (
    r.accepted === 0 ||
    Object.keys(r.offered.failures).length > 0 ||
    i.missingAtSinks > 0 ||
    i.unexpectedAtSinks > 0 ||
    i.duplicatesAtSinks > 0 ||
    i.duplicateDeliveredEvents > 0 ||
    i.unidentified > 0 ||
    r.delivered.postgres !== r.accepted
  );
}

export function print(date: string, machine: Record<string, unknown>, command: string, results: PhaseResult[]): void {
  const out: string[] = [''];
  out.push(`Herald delivery bench, ${date}`);
  out.push(
    `  machine: ${machine.cpus as number} × ${machine.cpu as string}, Node ${machine.node as string}; everything shares it (bench, API, workers, sinks, Postgres, Redis, NATS)`,
  );
  out.push(`  Postgres ${machine.postgres as string} (synchronous_commit=${machine.synchronousCommit as string}), NATS ${machine.nats as string}`);
  const bg = machine.backgroundLoad as number | null;
  if (bg !== null)
    out.push(`  machine busy before the bench: ${n(bg * 100)}%${bg > 0.15 ? '  WARNING: other work is running; figures are low and noisy' : ''}`);
  out.push(`  ${command}; ${options.sinks} MX sinks (STARTTLS) for ${DOMAINS} domains, one child process; ~10 KB emails, 1 recipient, DKIM-signed`);
  out.push('');
  out.push(
    `  ${''.padEnd(34)}${'accepted'.padStart(9)}${'acc/s'.padStart(8)}${'deliv/s'.padStart(9)}${'mid80/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p90 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}`,
  );
  for (const r of results) {
    out.push(
      `  ${r.name.padEnd(34)}${n(r.accepted).padStart(9)}${n(r.offered.acceptedPerSecond).padStart(8)}${n(r.delivered.perSecond).padStart(9)}` +
        `${n(r.delivered.middle80PerSecond).padStart(9)}${n(r.latencyMs.p50).padStart(8)}${n(r.latencyMs.p90).padStart(8)}${n(r.latencyMs.p99).padStart(8)}${n(r.latencyMs.max).padStart(8)}`,
    );
  }
  out.push('  (deliv/s = delivered ÷ (last sink receipt − first accept); mid80/s = the middle 80% of deliveries;');
  out.push(
    `   latency = email_events email.delivered created_at − emails.created_at, from Postgres; paced phase: after a ${options.warmup} s warm-up)`,
  );
  out.push('');
  const sat = results.find((r) => r.name.startsWith('saturation'));
  const lat = results.find((r) => r.name.startsWith('latency'));
  if (sat) {
    const met = sat.delivered.perSecond >= TARGETS.deliveredPerSecond;
    out.push(
      `  target delivered/s ≥ ${n(TARGETS.deliveredPerSecond)} sustained:       ${n(sat.delivered.perSecond)}/s (middle 80% ${n(sat.delivered.middle80PerSecond)}/s)  ${met ? 'MET' : 'MISSED'}`,
    );
  }
  for (const r of results) {
    const b = r.backlog;
    if (!b) continue;
    out.push(
      `  backlog of ${n(b.emails)} over ${n(b.destinations)} destinations drained in ${n(b.drainSeconds, 1)} s (${n(b.emails / b.drainSeconds)}/s) from the workers' start`,
    );
    for (const [i, m] of (b.workerMemory ?? []).entries()) {
      const met = m.peakMiB < WORKER_MEMORY_TARGET_MIB;
      out.push(
        `  target worker ${i + 1} resident < ${WORKER_MEMORY_TARGET_MIB} MiB: peak ${n(m.peakMiB)} MiB (VmHWM), ${n(m.endMiB)} MiB at the end  ${met ? 'MET' : 'MISSED'}`,
      );
    }
    if (!b.workerMemory) out.push('  worker resident memory: needs Linux /proc');
  }
  if (lat) {
    const keptUp = lat.delivered.perSecond >= 0.9 * (lat.offered.rate ?? 0);
    const met = lat.latencyMs.p99 < TARGETS.p99Ms;
    out.push(
      `  target p99 < ${TARGETS.p99Ms} ms below saturation (${n(lat.offered.rate ?? 0)}/s): p99 ${n(lat.latencyMs.p99)} ms  ${met ? 'MET' : 'MISSED'}` +
        `${keptUp ? '' : `  (NB: delivered ${n(lat.delivered.perSecond)}/s, so ${n(lat.offered.rate ?? 0)}/s is not below saturation here)`}`,
    );
  }
  out.push('');
  out.push('  CPU µs per delivered email, by process; "other" is work that is not the bench\'s (noise on a shared machine):');
  out.push(
    `  ${''.padEnd(34)}${'api'.padStart(7)}${'worker'.padStart(8)}${'sinks'.padStart(7)}${'bench'.padStart(7)}${'postgres'.padStart(9)}${'redis'.padStart(7)}${'nats'.padStart(7)}${'other'.padStart(8)}${'total'.padStart(8)}${'idle'.padStart(6)}`,
  );
  for (const r of results) {
    const c = r.cpu?.seconds;
    if (!c) {
      out.push(`  ${r.name}: CPU figures need Linux /proc`);
      continue;
    }
    const us = (v: number, w: number) => n((v * 1e6) / Math.max(1, r.delivered.sinks)).padStart(w);
    const busy = c.api + c.workers + c.sinks + c.bench + c.postgres + c.redis + c.nats + c.other;
    out.push(
      `  ${r.name.padEnd(34)}${us(c.api, 7)}${us(c.workers, 8)}${us(c.sinks, 7)}${us(c.bench, 7)}${us(c.postgres, 9)}${us(c.redis, 7)}${us(c.nats, 7)}${us(c.other, 8)}${us(busy, 8)}` +
        `${`${n((c.idle / (busy + c.idle)) * 100)}%`.padStart(6)}`,
    );
  }
  out.push('');
  for (const r of results) {
    const i = r.integrity;
    const ok = !failed(r);
    out.push(
      `  ${r.name}: ${ok ? 'OK' : 'NOT OK'}: accepted ${n(r.accepted)} in ${n(r.offered.requests)} calls (failures: ${JSON.stringify(r.offered.failures)}), ` +
        `at the sinks ${n(r.delivered.sinks)} (missing ${i.missingAtSinks}, duplicates ${i.duplicatesAtSinks}, unexpected ${i.unexpectedAtSinks}), ` +
        `delivered in Postgres ${n(r.delivered.postgres)} ${JSON.stringify(i.statuses)}, duplicate email.delivered events ${i.duplicateDeliveredEvents}; ` +
        `without DKIM-Signature ${i.unsigned}, not over TLS ${i.plaintext}; ${n(i.smtpConnections)} SMTP connections`,
    );
    out.push(
      `    accept → sink receipt (bench clock): p50 ${n(r.clientLatencyMs.p50)} ms, p99 ${n(r.clientLatencyMs.p99)} ms, max ${n(r.clientLatencyMs.max)} ms` +
        `${r.offered.behindMs !== undefined ? `; pacing fell behind by up to ${n(r.offered.behindMs)} ms` : ''}`,
    );
    out.push(
      `    first delivery ${n(r.delivered.firstAfterMs)} ms after the first accept; send stream: ${n(r.stream.published)} messages published, ${n(r.stream.redelivered)} redelivered to the workers`,
    );
    for (const id of i.missingIds) out.push(`    missing at the sinks: ${id}`);
    for (const row of i.notDelivered) out.push(`    not delivered: ${row.email_id} ${row.address} ${row.status} ${row.last_response ?? ''}`);
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}
