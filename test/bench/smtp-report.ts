import type { PhaseResult } from './smtp-measure';
import { options, TARGETS } from './smtp-options';

// The SMTP bench's printed table and its verdict.

const n = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';

/** Herald's delivered/s ÷ each Postfix's (NaN when one of the two did not run). */
export interface Ratios {
  plain: number;
  dkim: number;
}

export function print(date: string, machine: Record<string, unknown>, results: PhaseResult[], ratios: Ratios): void {
  const out: string[] = [''];
  out.push(`Herald SMTP relay bench, ${date}`);
  out.push(`  machine: ${machine.cpus as number} × ${machine.cpu as string}, Node ${machine.node as string}; everything shares it`);
  out.push(
    `  Postgres ${machine.postgres as string} (synchronous_commit=${machine.synchronousCommit as string}), NATS ${machine.nats as string}; Postfix queue: ${machine.postfixQueue as string}`,
  );
  const bg = machine.backgroundLoad as number | null;
  if (bg !== null)
    out.push(`  machine busy before the bench: ${n(bg * 100)}%${bg > 0.15 ? '  WARNING: other work is running; figures are low and noisy' : ''}`);
  out.push(
    `  load: smtp-source -s ${options.sessions} -m ${options.messages} -l ${options.size} -d -N, through the STARTTLS/AUTH shim, into one smtp-sink`,
  );
  out.push(
    `  herald: herald smtp + api + ${options.workers} × worker (production mode); postfix: private instance, queue on disk, relayhost = the sink`,
  );
  out.push('  postfix-dkim: the same instance, a second listener whose mail OpenDKIM (milter, RSA-2048, relaxed/relaxed) signs');
  out.push('');
  out.push(
    `  ${''.padEnd(13)}${'messages'.padStart(9)}${'submit/s'.padStart(10)}${'deliv/s'.padStart(9)}${'mid80/s'.padStart(9)}${'seconds'.padStart(9)}${'drain s'.padStart(9)}  integrity`,
  );
  for (const r of results) {
    const i = r.integrity;
    const check =
      `${r.ok ? 'OK' : 'NOT OK'}: smtp-source exit ${r.source.code}, sink ${n(r.delivered)}` +
      (i.dumped !== null
        ? `, ${n(i.dumped)} dumped, ${i.duplicates} duplicate Message-Ids, ${i.badBodies} bad bodies, ${i.withDkimSignature} DKIM-signed, ${i.dkimPass} DKIM pass`
        : '') +
      (r.shim.handshakeFailures ? `, ${r.shim.handshakeFailures} shim handshake failures ${JSON.stringify(r.shim.errors)}` : '') +
      `, ${JSON.stringify(r.server)}`;
    out.push(
      `  ${r.system.padEnd(13)}${n(r.messages).padStart(9)}${n(r.source.acceptedPerSecond).padStart(10)}${n(r.deliveredPerSecond).padStart(9)}` +
        `${n(r.middle80PerSecond).padStart(9)}${n(r.seconds, 1).padStart(9)}${n(r.drainSeconds, 1).padStart(9)}  ${check}`,
    );
  }
  out.push('  (submit/s = messages ÷ smtp-source run time; deliv/s = sink receipts ÷ (last receipt − smtp-source start);');
  out.push('   mid80/s = the middle 80% of receipts ÷ the time between the 10th and 90th percentile receipt)');
  out.push('');
  const verdict = (ratio: number, target: number) => `${n(ratio, 2)}×   target ≥ ${target}×: ${ratio >= target ? 'MET' : 'MISSED'}`;
  if (Number.isFinite(ratios.plain)) out.push(`  Herald ÷ Postfix delivered/s           = ${verdict(ratios.plain, TARGETS.plain)}`);
  if (Number.isFinite(ratios.dkim)) out.push(`  Herald ÷ Postfix+OpenDKIM delivered/s  = ${verdict(ratios.dkim, TARGETS.dkim)}`);
  if (Number.isFinite(ratios.plain) || Number.isFinite(ratios.dkim)) out.push('');
  out.push('  CPU µs per delivered message, by process ("system" = Herald smtp/api/worker, or all Postfix daemons, and opendkim):');
  for (const r of results) {
    const c = r.cpu;
    if (!c) continue;
    const us = (v: number) => n((v * 1e6) / Math.max(1, r.delivered));
    const parts = Object.entries(c.system).map(([k, v]) => `${k} ${us(v)}`);
    const busy =
      Object.values(c.system).reduce((a, b) => a + b, 0) + c.sink + c.shim + c.smtpSource + c.bench + c.postgres + c.redis + c.nats + c.other;
    out.push(
      `  ${r.system.padEnd(13)}${parts.join(', ')} | sink ${us(c.sink)}, shim ${us(c.shim)}, smtp-source ${us(c.smtpSource)}, bench ${us(c.bench)}, ` +
        `postgres ${us(c.postgres)}, redis ${us(c.redis)}, nats ${us(c.nats)}, other ${us(c.other)} | total ${us(busy)}, idle ${n((c.idle / (busy + c.idle)) * 100)}%`,
    );
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}
