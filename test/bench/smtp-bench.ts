// The SMTP relay benchmark (SMTP.md beside it). Postfix's smtp-source sends the same load, in one
// run, through two relays into the same Postfix smtp-sink:
//   herald:  smtp-source → submission shim (STARTTLS + AUTH PLAIN herald/<API key>) → `herald smtp`
//            (Postgres, NATS) → `herald worker` (MX lookup on the bench's DNS, DKIM) → smtp-sink;
//   postfix: smtp-source → the same shim (STARTTLS; loopback is in mynetworks) → a private Postfix
//            instance, queue on disk → relayhost = smtp-sink;
//   postfix-dkim: the same, through a second listener of that instance whose mail Debian's
//            OpenDKIM signs as a milter (RSA-2048, as Herald signs) before it is queued.
// smtp-source speaks neither STARTTLS nor AUTH, hence the shim (bench-smtp-proxy.ts, a child
// process metered apart); SMTP.md says why. Delivered/s = messages the sink received ÷ (last
// receipt − smtp-source's start); the ratios Herald/Postfix (target 1×) and Herald/Postfix+OpenDKIM
// (target 2×) are held against issue 16's targets.
// Options: --messages N (5000), --sessions N (20), --size BYTES (10240, smtp-source -l),
// --warmup N (200 messages through each system first, not measured), --workers N (1),
// --only herald|postfix|postfix-dkim, --profile (V8 CPU profiles of herald smtp and worker into
// test/bench/results/profiles), --no-dump (count at the sink only: no duplicate/DKIM check), --keep
// (leave the schema, keys, streams and temp dirs), --no-save.
import './aliases';
import { saveResults } from './bench-report';
import { backgroundLoad } from './cpu-meter';
import type { PhaseResult } from './smtp-measure';
import { options, run, SYSTEMS, TARGETS, type System } from './smtp-options';
import { Bench } from './smtp-phases';
import { print, type Ratios } from './smtp-report';

/** The file system type of a directory (the Postfix queue must be on disk, not tmpfs). */
async function fsType(dir: string): Promise<string> {
  return run('stat', ['-f', '-c', '%T', dir]).then(
    (r) => r.stdout.trim(),
    () => 'unknown',
  );
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('the SMTP bench runs smtp-sink (-u nobody) and a private Postfix instance: run it as root');
  const background = await backgroundLoad();
  const bench = new Bench();
  process.once('SIGINT', () => void bench.tearDown().finally(() => process.exit(130)));
  try {
    await bench.setUp();
    const systems: readonly System[] = options.only ? [options.only] : SYSTEMS;
    if (options.warmup > 0) for (const s of systems) await bench.phase(s, options.warmup, false);
    const results: PhaseResult[] = [];
    for (const s of systems) results.push(await bench.phase(s, options.messages, true));
    const date = new Date().toISOString();
    const postfixQueue = bench.postfix ? `${bench.tmp} (${await fsType(bench.tmp)})` : 'not run';
    const machine = { ...(await bench.world.describeMachine()), backgroundLoad: background, postfixQueue };
    const rate = (system: System) => results.find((r) => r.system === system)?.deliveredPerSecond ?? NaN;
    const ratios: Ratios = { plain: rate('herald') / rate('postfix'), dkim: rate('herald') / rate('postfix-dkim') };
    print(date, machine, results, ratios);
    if (options.save) {
      const file = saveResults('smtp-bench', date, {
        date,
        machine,
        options,
        targets: { ...TARGETS, plainMet: ratios.plain >= TARGETS.plain, dkimMet: ratios.dkim >= TARGETS.dkim },
        ratios,
        results,
      });
      process.stdout.write(`  results: ${file}\n`);
    }
    return results.every((r) => r.ok) ? 0 : 1;
  } finally {
    await bench.tearDown();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`smtp-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
