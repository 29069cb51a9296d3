// A connection flood against an SMTP server, in a process of its own (its descriptor limit raised
// by the shell that starts it: see connection-flood.ts). Commands arrive on stdin as JSON lines:
//   {"open": {"sources": ["127.0.1.1", ...], "perSource": 1250, "concurrency": 200}}
// opens that many connections from each source address and answers with the first reply of
// each, counted by source and reply; connections greeted with 220 are kept open and idle, the
// others closed. {"close": true} closes everything and exits.
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const [host, port] = [process.argv[2], Number(process.argv[3])];
const held = new Set();

/** The first reply line of a new connection from `source` (`error CODE` or `closed` without one). */
function firstReply(source) {
  return new Promise((resolve) => {
    const socket = connect({ host, port, localAddress: source });
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('error', (error) => resolve(`error ${error.code}`));
    socket.on('close', () => {
      held.delete(socket);
      resolve(buffered ? buffered.trim() : 'closed');
    });
    socket.on('data', (chunk) => {
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      const reply = buffered.slice(0, end).trim();
      if (reply.startsWith('220')) held.add(socket);
      else socket.destroy();
      socket.removeAllListeners('data');
      resolve(reply);
    });
  });
}

/** `421 4.7.0 Too many ...` → `421 4.7.0`; `220 host ESMTP` → `220`; `error ECONNRESET` and `closed` as they are. */
const kind = (reply) => (/^\d{3}/.test(reply) ? (/^\d{3} \d\.\d\.\d+/.exec(reply)?.[0] ?? reply.slice(0, 3)) : reply);

async function open({ sources, perSource, concurrency }) {
  const started = Date.now();
  const queue = sources.flatMap((source) => Array.from({ length: perSource }, () => source));
  const bySource = Object.fromEntries(sources.map((s) => [s, {}]));
  const samples = {};
  let next = 0;
  const lane = async () => {
    while (next < queue.length) {
      const source = queue[next++];
      const reply = await firstReply(source);
      const k = kind(reply);
      bySource[source][k] = (bySource[source][k] ?? 0) + 1;
      samples[k] ??= reply;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { opened: queue.length, held: held.size, ms: Date.now() - started, bySource, samples };
}

const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.open) say(await open(command.open));
  if (command.close) {
    for (const socket of held) socket.destroy();
    say({ closed: true });
    process.exit(0);
  }
}
