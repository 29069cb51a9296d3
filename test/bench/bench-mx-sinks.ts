// The delivery bench's recipient MX hosts, in their own process (forked by delivery-sinks.ts with
// an IPC channel) so that their CPU is measured apart from Herald's and the bench's. One MxSink
// (smtp-server, STARTTLS offered) per loopback address of BENCH_SINK_HOSTS, all on
// BENCH_SINK_PORT (Herald's DELIVERY_PORT). It keeps no message bodies: every 20 ms it takes the
// messages the sinks accepted, reads the Message-ID header (`<email id@domain>`, so the email id)
// and whether the message is DKIM-signed and came over TLS, and drops the bytes.
//
// IPC, parent → child: {type:'take'} answers {type:'take', receipts: [emailId, receivedAt][],
// duplicates, unsigned, plaintext, connections, received} with the receipts since the last take
// (duplicates are counted over the process's life); {type:'count'} answers {type:'count', received}.
// The child sends {type:'ready'} once every sink listens, and exits when the channel closes.
import './aliases';
import { MxSink } from '@herald/testing';

export interface SinkTake {
  type: 'take';
  /** [email id (from the Message-ID), Date.now() when the sink accepted it] */
  receipts: [string, number][];
  /** Messages whose Message-ID had already been received (since the process started). */
  duplicates: number;
  /** Messages without a DKIM-Signature header, and messages not sent over STARTTLS. */
  unsigned: number;
  plaintext: number;
  /** Messages without a readable Message-ID. */
  unidentified: number;
  connections: number;
  received: number;
}

export type SinkMessageToParent = SinkTake | { type: 'ready' } | { type: 'count'; received: number };

const MESSAGE_ID = /^message-id:\s*<([^@>\s]+)@/im;
const DKIM = /^dkim-signature:/im;

async function main(): Promise<void> {
  const hosts = (process.env.BENCH_SINK_HOSTS ?? '').split(',').filter(Boolean);
  const port = Number(process.env.BENCH_SINK_PORT);
  // keepRaw, drained continuously: the Message-ID is the only way to tell duplicates apart.
  const sinks = await Promise.all(hosts.map((host) => MxSink.start({ host, port, keepRaw: true })));
  const seen = new Set<string>();
  let receipts: [string, number][] = [];
  let duplicates = 0;
  let unsigned = 0;
  let plaintext = 0;
  let unidentified = 0;

  const drain = () => {
    for (const sink of sinks) {
      for (const m of sink.messages) {
        // Headers only: the message bodies are ~10 KB and the headers end at the first empty line.
        const end = m.raw.indexOf('\r\n\r\n');
        const headers = m.raw.toString('latin1', 0, end < 0 ? Math.min(m.raw.length, 16_384) : end);
        const id = MESSAGE_ID.exec(headers)?.[1];
        if (!DKIM.test(headers)) unsigned++;
        if (!m.secure) plaintext++;
        if (!id) {
          unidentified++;
          continue;
        }
        if (seen.has(id)) duplicates++;
        else seen.add(id);
        receipts.push([id, m.receivedAt]);
      }
      sink.messages.length = 0;
    }
  };
  const timer = setInterval(drain, 20);
  const received = () => sinks.reduce((sum, s) => sum + s.received, 0);

  process.on('message', (message: { type: string }) => {
    if (message.type === 'count') {
      process.send!({ type: 'count', received: received() } satisfies SinkMessageToParent);
    } else if (message.type === 'take') {
      drain();
      const take: SinkTake = {
        type: 'take',
        receipts,
        duplicates,
        unsigned,
        plaintext,
        unidentified,
        connections: sinks.reduce((sum, s) => sum + s.connections, 0),
        received: received(),
      };
      receipts = [];
      process.send!(take);
    }
  });
  process.on('disconnect', () => {
    clearInterval(timer);
    void Promise.allSettled(sinks.map((s) => s.close())).then(() => process.exit(0));
  });
  process.send!({ type: 'ready' } satisfies SinkMessageToParent);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench-mx-sinks: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
