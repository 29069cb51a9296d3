// The delivery benchmark (`npm run bench:delivery`; DELIVERY.md beside it). On this machine's
// Postgres, Redis and NATS, in its own schema, prefix and namespace, with a local DNS server, it
// runs `herald api` and N × `herald worker` as child processes and sends ~10 KB emails through
// POST /emails/batch, JetStream and the workers (DKIM-signed, over SMTP with STARTTLS) to local MX
// sinks (bench-mx-sinks.ts, a child process) spread over 50 recipient domains. Two phases:
//   saturation: --emails N (20,000) submitted as fast as the batch API takes them (100 per call);
//     delivered/s = delivered ÷ (last delivery at a sink − first accept), and the steady rate of
//     the middle 80% of deliveries; target ≥ 1,500/s.
//   latency: a steady offered load of --rate R emails/s (1,000) for --duration S (15), paced
//     batches of 10–100; accept-to-delivered p50/p99/max from Postgres (email_events
//     'email.delivered'.created_at − emails.created_at); target p99 < 500 ms.
//   backlog (--only backlog, not in the default run): --backlog N (50,000) emails to --destinations D
//     (500) recipient domains, each with an MX host of its own (a destination each), queued with no
//     worker running; then the workers start and drain it. Prints each worker's resident memory,
//     peak (VmHWM) and at the end; target < 300 MiB.
// Each phase waits for every accepted email to reach a final status, checks that every one was
// delivered exactly once (sink Message-IDs and email_recipients), and records the CPU each
// process spent per delivered email. Exit code 1 when an email was lost, not delivered, delivered
// twice or a request failed; a missed target only prints MISSED.
// Options: --emails N, --rate R, --duration S, --warmup S (2, paced phase), --workers N (worker processes, 1), --sinks N (10),
// --connections N (batch requests in flight in the saturation phase, 8), --only saturation|latency|backlog,
// --backlog N, --destinations D,
// --profile (CPU profile of the worker(s) into test/bench/results/profiles), --keep (leave the
// schema, keys and streams), --no-save (no JSON in test/bench/results).
import './aliases';
import { saveResults } from './bench-report';
import { backgroundLoad } from './cpu-meter';
import { options, TARGETS } from './delivery-options';
import { Bench } from './delivery-phases';
import { failed, print } from './delivery-report';

async function main(): Promise<number> {
  const background = await backgroundLoad();
  const bench = new Bench();
  process.once('SIGINT', () => void bench.tearDown().finally(() => process.exit(130)));
  try {
    const { command } = await bench.setUp();
    const results = await bench.run();
    const date = new Date().toISOString();
    const machine = { ...(await bench.world.describeMachine()), backgroundLoad: background };
    print(date, machine, command, results);
    if (options.save) {
      const file = saveResults('delivery-bench', date, { date, machine, command, options, targets: TARGETS, results });
      process.stdout.write(`  results: ${file}\n`);
    }
    return results.some(failed) ? 1 : 0;
  } finally {
    await bench.tearDown();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`delivery-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
