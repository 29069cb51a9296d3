import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// The SMTP bench's settings: its command-line options, target and the names of its world.

export const run = promisify(execFile);
/** Issue 16: Herald's delivered/s at least Postfix's, and twice Postfix's when Postfix signs too (OpenDKIM). */
export const TARGETS = { plain: 1, dkim: 2 };
/** A phase gives up when the sink received nothing new for this long. */
export const STALL_MS = 30_000;
export const SINK_HOST = '127.0.0.2';
export const SINK_MX = 'mx.sink.bench.test';
export const RCPT_DOMAIN = 'rcpt.bench.test';

/** Herald; Postfix plain; Postfix signing through OpenDKIM (its second listener, same instance). */
export const SYSTEMS = ['herald', 'postfix', 'postfix-dkim'] as const;
export type System = (typeof SYSTEMS)[number];

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} needs a whole number`);
  return value;
}
const onlyArg = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
if (onlyArg !== null && !(SYSTEMS as readonly string[]).includes(onlyArg)) throw new Error(`--only takes ${SYSTEMS.join(', ')}`);
export const options = {
  messages: option('messages', 5_000),
  sessions: option('sessions', 20),
  size: option('size', 10_240),
  warmup: option('warmup', 200),
  workers: option('workers', 1),
  only: onlyArg as System | null,
  dump: !process.argv.includes('--no-dump'),
  profile: process.argv.includes('--profile'),
  keep: process.argv.includes('--keep'),
  save: !process.argv.includes('--no-save'),
};
if (options.messages < 1 || options.sessions < 1) throw new Error('--messages and --sessions must be at least 1');
