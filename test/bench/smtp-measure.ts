import { Resolver } from 'node:dns/promises';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DNSResolver } from 'mailauth';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import type { ProxyStats } from './bench-smtp-proxy';
import { meterCpu } from './cpu-meter';
import { reapedChildrenCpu, treeCpu } from './process-tree-cpu';
import { options, type System } from './smtp-options';

// The SMTP bench's measurement: what a phase records, the CPU of each process, and the sink's dumps.

export interface Integrity {
  /** Messages the sink received (its counter). */
  received: number;
  /** From the dump files (null with --no-dump). */
  dumped: number | null;
  distinctMessageIds: number | null;
  duplicates: number | null;
  withDkimSignature: number | null;
  /** Messages with a DKIM signature of the sending domain that mailauth verifies (pass). */
  dkimPass: number | null;
  /** Messages whose body is not smtp-source's payload of the requested length. */
  badBodies: number | null;
}

export interface CpuSeconds {
  /** Herald: smtp, api, worker(s); Postfix: every daemon of the instance. */
  system: Record<string, number>;
  sink: number;
  shim: number;
  smtpSource: number;
  bench: number;
  postgres: number;
  redis: number;
  nats: number;
  other: number;
  idle: number;
}

export interface PhaseResult {
  system: System;
  messages: number;
  sessions: number;
  size: number;
  /** smtp-source's exit: 0 means every message got a 2xx reply to its DATA. */
  source: { code: number | null; stderr: string; seconds: number; acceptedPerSecond: number };
  delivered: number;
  deliveredPerSecond: number;
  middle80PerSecond: number;
  /** First submit (smtp-source start) to the last receipt at the sink. */
  seconds: number;
  /** After smtp-source finished, how long until the last receipt (the relay's queue draining). */
  drainSeconds: number;
  integrity: Integrity;
  shim: ProxyStats;
  /** Herald: rows and recipient statuses in Postgres; Postfix: messages left in its queue. */
  server: Record<string, unknown>;
  cpu: CpuSeconds | null;
  ok: boolean;
}

/** Meters the CPU of a system's processes (`groups`), the sink, the shim, smtp-source and the rest of the machine. */
export function meterPhase(groups: Record<string, number[]>, sinkPid: number, shimPid: number): () => CpuSeconds | null {
  const sum = (pids: number[]) => pids.reduce((a, pid) => a + treeCpu(pid), 0);
  const before = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, sum(pids)]));
  const sink0 = treeCpu(sinkPid);
  const shim0 = treeCpu(shimPid);
  const reaped0 = reapedChildrenCpu();
  const machine = meterCpu(process.pid);
  return () => {
    const split = machine();
    if (!split) return null;
    const systemCpu = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, sum(pids) - before[k]!]));
    const sink = treeCpu(sinkPid) - sink0;
    const shim = treeCpu(shimPid) - shim0;
    const smtpSourceCpu = reapedChildrenCpu() - reaped0;
    const busy = split.server + split.loadGenerator + split.postgres + split.redis + split.nats + split.other;
    const known =
      Object.values(systemCpu).reduce((a, b) => a + b, 0) +
      sink +
      shim +
      smtpSourceCpu +
      split.loadGenerator +
      split.postgres +
      split.redis +
      split.nats;
    return {
      system: systemCpu,
      sink,
      shim,
      smtpSource: smtpSourceCpu,
      bench: split.loadGenerator,
      postgres: split.postgres,
      redis: split.redis,
      nats: split.nats,
      other: Math.max(0, busy - known),
      idle: split.idle,
    };
  };
}

/**
 * mailauth's verdict on a message's DKIM signatures against the bench's DNS: true when one made
 * for `domain` passes. The key records are asked once each (the DNS server is in this process).
 */
export function dkimChecker(dnsServer: string, domain: string): (message: Buffer) => Promise<boolean> {
  const resolver = new Resolver({ timeout: 1000, tries: 2 });
  resolver.setServers([dnsServer]);
  const answers = new Map<string, Promise<string[][] | string[]>>();
  const resolve: DNSResolver = (name, type) => {
    const key = `${type} ${name}`;
    if (!answers.has(key)) answers.set(key, resolver.resolve(name, type) as Promise<string[][] | string[]>);
    return answers.get(key)!;
  };
  return async (message) => {
    const { results } = await dkimVerify(message, { resolver: resolve });
    return results.some((r) => r.signingDomain === domain && r.status?.result === 'pass');
  };
}

/**
 * Reads and removes the sink's dump files of the phase (in `dumpDir`, null with --no-dump): one
 * file per message. Runs after the phase's CPU was metered: mailauth's work is not counted.
 */
export async function checkDumps(dumpDir: string | null, received: number, dkimPasses: (message: Buffer) => Promise<boolean>): Promise<Integrity> {
  const result: Integrity = {
    received,
    dumped: null,
    distinctMessageIds: null,
    duplicates: null,
    withDkimSignature: null,
    dkimPass: null,
    badBodies: null,
  };
  if (!dumpDir) return result;
  const ids = new Set<string>();
  let dumped = 0;
  let dkim = 0;
  let dkimPass = 0;
  let badBodies = 0;
  for (const name of readdirSync(dumpDir)) {
    const file = join(dumpDir, name);
    const text = readFileSync(file, 'latin1');
    rmSync(file);
    dumped++;
    const split = text.indexOf('\n\n');
    const head = text.slice(0, split);
    const id = /^Message-Id:\s*(.+)$/im.exec(head)?.[1]?.trim() ?? `(none ${dumped})`;
    ids.add(id);
    if (/^DKIM-Signature:/im.test(head)) {
      dkim++;
      // smtp-sink writes lines ending in LF, below headers of its own (X-Client-Addr, ..., Received), which no signature covers.
      if (await dkimPasses(Buffer.from(text.replace(/\n/g, '\r\n'), 'latin1'))) dkimPass++;
    }
    // smtp-source's payload: `size` bytes of numbered lines of X (lines end with \n in the dump),
    // then smtp-sink's blank line. Herald may re-encode the body; count payload bytes, not layout.
    const body = text.slice(split + 2).replace(/\r?\n/g, '');
    const payload = body.replace(/[^0-9X]/g, '').length;
    if (Math.abs(payload - options.size) > options.size * 0.05) badBodies++;
  }
  return { received, dumped, distinctMessageIds: ids.size, duplicates: dumped - ids.size, withDkimSignature: dkim, dkimPass, badBodies };
}
