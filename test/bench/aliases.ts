// Maps the @herald/* library aliases onto the compiled output, as bin/herald.js does for the
// CLI, so `node dist/test/bench/api-bench.js` runs without a loader. Import this module first:
// the compiled imports are plain requires that run in order.
import Module from 'node:module';
import { join } from 'node:path';

/** dist/ (this file is dist/test/bench/aliases.js once built). */
export const DIST = join(__dirname, '..', '..');

type Resolve = (request: string, ...rest: unknown[]) => string;
const resolver = Module as unknown as { _resolveFilename: Resolve };
const resolve = resolver._resolveFilename;
resolver._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  const target = request.startsWith('@herald/') ? join(DIST, 'libs', request.slice('@herald/'.length), 'src', 'index.js') : request;
  return resolve.call(this, target, ...rest);
};
