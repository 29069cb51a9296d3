import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

interface LintMessage {
  file: string;
  line: number;
  ruleId: string | null;
  message: string;
}

interface LintRun {
  files: string[];
  messages: LintMessage[];
}

const root = join(__dirname, '..', '..');
const FIXTURES = 'test/lint/fixtures';

// Each planted file and the policies it must break, one tag per report; the tag is the start of
// the policy's message in eslint.config.mjs. Every other fixture file is clean.
const PLANTED: Record<string, string[]> = {
  'libs/beta/src/deep-import.ts': ['deep-import'],
  'libs/beta/src/relative-index.ts': ['deep-import'],
  'apps/gamma/src/deep-import.ts': ['deep-import'],
  'libs/emails/src/delivery-coupling.ts': ['emails-delivery'],
  'libs/delivery/src/emails-coupling.ts': ['emails-delivery'],
  'libs/alpha/src/alpha.service.ts': ['service-typeorm', 'service-typeorm'],
  'libs/alpha/src/uses-testing.ts': ['test-code'],
  'apps/gamma/src/test-support.ts': ['test-code'],
};
const CLEAN = ['libs/beta/src/clean.ts', 'libs/alpha/src/alpha.repository.ts', 'libs/alpha/src/index.ts'];

/**
 * ESLint loads eslint.config.mjs with import(); under jest, whose transform reaches node_modules
 * here, that import() becomes a require() of the .mjs file and fails. So the lint runs in a child
 * node process and answers in JSON.
 */
async function lintBoundaries(...args: string[]): Promise<LintRun> {
  const { stdout } = await promisify(execFile)(process.execPath, ['test/lint/lint-boundaries.mjs', ...args], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as LintRun;
}

describe('import boundaries (eslint.config.mjs)', () => {
  it('reports every planted violation under the policy it breaks, and nothing in the clean fixtures', async () => {
    const run = await lintBoundaries('--fixtures', FIXTURES);

    const reported: Record<string, string[]> = {};
    for (const { file, ruleId, message } of run.messages) {
      expect(ruleId).toBe('boundaries/dependencies');
      const fixture = file.slice(FIXTURES.length + 1);
      (reported[fixture] ??= []).push(message.split(':')[0]);
    }
    expect(reported).toEqual(PLANTED);
    expect(run.files).toEqual(expect.arrayContaining(CLEAN.map((file) => `${FIXTURES}/${file}`)));
  });

  it('passes on the real libs and apps', async () => {
    const run = await lintBoundaries('libs', 'apps');

    expect(run.messages).toEqual([]);
    expect(run.files.length).toBeGreaterThan(300);
    // About 35 s alone on two cores since the dashboard's .tsx files are linted too; more on a busy machine.
  }, 180_000);
});
