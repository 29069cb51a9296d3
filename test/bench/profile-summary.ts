import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

// Summarises V8 CPU profiles (`node --cpu-prof`) by self time: per function (with its file) and
// per file or package. Usage: node dist/test/bench/profile-summary.js DIR|FILE... [--top N] [--last S] [--until S]
// (`--last S`: only the profile's last S seconds, e.g. a bench's load and catch-up without the boot;
// `--until S`: without its last S seconds, e.g. the catch-up after the load).
// A directory is searched for *.cpuprofile files; each is labelled with its directory's name
// (the SMTP bench writes one directory per role: api, smtp, worker).

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a script belongs: a package name under node_modules, a path of Herald's dist, or a V8/Node category. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  return dist !== -1 ? url.slice(dist + '/dist/'.length).replace(/^file:\/\//, '') : basename(url);
}

export interface Summary {
  totalMs: number;
  byFunction: { name: string; ms: number }[];
  byArea: { name: string; ms: number }[];
}

export function summarise(profile: CpuProfile, lastSeconds = Infinity, untilSeconds = 0): Summary {
  const self = new Map<number, number>();
  const since = profile.endTime - lastSeconds * 1e6;
  const until = profile.endTime - untilSeconds * 1e6;
  for (let i = 0, at = profile.startTime; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < since || at > until) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    total += us;
    const area = areaOf(url, functionName);
    const fn = `${functionName || '(anonymous)'} ${area}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) => [...m].map(([name, us]) => ({ name, ms: us / 1000 })).sort((a, b) => b.ms - a.ms);
  return { totalMs: total / 1000, byFunction: sorted(byFunction), byArea: sorted(byArea) };
}

function files(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .flatMap((name) => files(join(path, name)))
    .filter((f) => f.endsWith('.cpuprofile'));
}

function main(): void {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt === -1 ? 25 : Number(args.splice(topAt, 2)[1]);
  const lastAt = args.indexOf('--last');
  const last = lastAt === -1 ? Infinity : Number(args.splice(lastAt, 2)[1]);
  const untilAt = args.indexOf('--until');
  const until = untilAt === -1 ? 0 : Number(args.splice(untilAt, 2)[1]);
  if (args.length === 0) throw new Error('usage: profile-summary DIR|FILE... [--top N]');
  for (const root of args) {
    for (const file of files(root)) {
      const s = summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, last, until);
      const pct = (ms: number) => `${((100 * ms) / s.totalMs).toFixed(1).padStart(5)}%`;
      const label = relative(root, file).split('/')[0] || basename(file);
      process.stdout.write(`\n${label} (${file}): ${s.totalMs.toFixed(0)} ms of CPU (samples, idle and "(program)" excluded)\n`);
      process.stdout.write(`  self time by file or package:\n`);
      for (const a of s.byArea.slice(0, Math.min(top, 15))) process.stdout.write(`    ${pct(a.ms)} ${a.ms.toFixed(0).padStart(7)} ms  ${a.name}\n`);
      process.stdout.write(`  self time by function:\n`);
      for (const f of s.byFunction.slice(0, top)) process.stdout.write(`    ${pct(f.ms)} ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}\n`);
    }
  }
}

if (require.main === module) main();
