// HmacSha256Key against createHmac per MAC, over a tracking token's parts (the kind's tag and an
// 80-byte body): `node dist/test/bench/hmac-bench.js [--macs N]` prints µs per MAC in four rounds,
// the two ways alternating within each round (the machine's speed drifts between rounds).
import './aliases';
import { createHmac, randomBytes } from 'node:crypto';
import { HmacSha256Key } from '@herald/core';

const at = process.argv.indexOf('--macs');
const macs = at >= 0 ? Number(process.argv[at + 1]) : 200_000;
const key = randomBytes(32);
const fast = new HmacSha256Key(key);
const tag = Buffer.of(0x63);
const body = randomBytes(80);
const ways: [string, () => Buffer][] = [
  ['HmacSha256Key', () => fast.digest(tag, body)],
  ['createHmac', () => createHmac('sha256', key).update(tag).update(body).digest()],
];
if (!ways[0]![1]().equals(ways[1]![1]())) throw new Error('the two MACs differ');
for (let round = 1; round <= 4; round++) {
  for (const [name, mac] of ways) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < macs; i++) mac();
    console.log(`round ${round}: ${name.padEnd(14)} ${(Number(process.hrtime.bigint() - started) / macs / 1000).toFixed(2)} µs per MAC`);
  }
}
