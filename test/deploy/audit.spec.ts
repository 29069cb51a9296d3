import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = join(__dirname, '..', '..', 'deploy', 'local', 'audit.mjs');

/** An npm audit (report v2) entry: minimist's prototype pollution, pulled in by mkdirp. */
const advisory = (severity: string, ghsa = 'GHSA-xvch-5gv4-984h') => ({
  auditReportVersion: 2,
  vulnerabilities: {
    minimist: {
      name: 'minimist',
      severity,
      isDirect: false,
      via: [
        {
          source: 1096466,
          name: 'minimist',
          dependency: 'minimist',
          title: 'Prototype Pollution in minimist',
          url: `https://github.com/advisories/${ghsa}`,
          severity,
          range: '<0.2.4',
        },
      ],
      effects: ['mkdirp'],
      range: '<=0.2.3',
      nodes: ['node_modules/minimist'],
      fixAvailable: true,
    },
    mkdirp: {
      name: 'mkdirp',
      severity,
      isDirect: true,
      via: ['minimist'],
      effects: [],
      range: '0.4.1 - 0.5.1',
      nodes: ['node_modules/mkdirp'],
      fixAvailable: true,
    },
  },
  metadata: { vulnerabilities: { [severity]: 2, total: 2 } },
});

/**
 * deploy/local/audit.mjs, the `npm audit` step of `npm test`, with the audit command replaced
 * (HERALD_AUDIT_COMMAND) by one that prints a given report, and a given allow-list; and once with
 * the real `npm audit` against a registry that does not answer.
 */
describe('npm audit in CI (deploy/local/audit.mjs)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'herald-audit-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function run(report: unknown, allowed: unknown = { advisories: [] }, env: Record<string, string> = {}) {
    const reportFile = join(dir, `report-${Math.random()}.json`);
    const allowFile = join(dir, `allow-${Math.random()}.json`);
    writeFileSync(reportFile, typeof report === 'string' ? report : JSON.stringify(report));
    writeFileSync(allowFile, JSON.stringify(allowed));
    return new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [SCRIPT],
        { env: { ...process.env, HERALD_AUDIT_COMMAND: `cat '${reportFile}'`, HERALD_AUDIT_ALLOWLIST: allowFile, ...env } },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
      );
    });
  }

  it('fails on a high or critical advisory outside the allow-list, naming it', async () => {
    for (const severity of ['high', 'critical']) {
      const { code, stderr } = await run(advisory(severity));
      expect({ severity, code }).toEqual({ severity, code: 1 });
      expect(stderr).toContain(`${severity.toUpperCase()} GHSA-xvch-5gv4-984h in minimist <0.2.4: Prototype Pollution in minimist`);
      expect(stderr).toContain('high or critical advisories in the production dependencies; fix them, or list each in');
    }
  });

  it('passes an allow-listed advisory, printing its reason, and lower severities', async () => {
    const allowed = {
      advisories: [{ id: 'GHSA-xvch-5gv4-984h', package: 'minimist', reason: 'only the build reads argv through it', reviewed: '2026-11-26' }],
    };
    const listed = await run(advisory('critical'), allowed);
    expect(listed).toEqual({
      code: 0,
      stderr: expect.stringContaining('allowed critical GHSA-xvch-5gv4-984h in minimist: only the build reads argv'),
    });
    const moderate = await run(advisory('moderate'));
    expect(moderate).toEqual({ code: 0, stderr: expect.stringContaining('1 advisories below high') });
    const clean = await run({ auditReportVersion: 2, vulnerabilities: {}, metadata: {} }, allowed);
    expect(clean.code).toBe(0);
    expect(clean.stderr).toContain('GHSA-xvch-5gv4-984h is in the allow-list but no longer reported: remove it');
  });

  it('refuses an allow-list entry without a GHSA id or a reason', async () => {
    const noReason = await run(advisory('high'), { advisories: [{ id: 'GHSA-xvch-5gv4-984h', package: 'minimist' }] });
    expect(noReason).toEqual({ code: 2, stderr: expect.stringContaining('GHSA-xvch-5gv4-984h needs a reason') });
    const badId = await run(advisory('high'), { advisories: [{ id: '1096466', reason: 'a reason long enough to pass the check' }] });
    expect(badId).toEqual({ code: 2, stderr: expect.stringContaining('must be a GHSA id') });
  });

  it('says it could not check, and does not fail, when the registry cannot be asked', async () => {
    const refused = {
      message: 'request to http://127.0.0.1:1/-/npm/v1/security/advisories/bulk failed, reason: connect ECONNREFUSED 127.0.0.1:1',
      error: { summary: '', detail: '' },
    };
    expect(await run(refused)).toEqual({ code: 0, stderr: expect.stringContaining('could not check the production dependencies: request to') });
    expect(await run('npm error: nothing')).toEqual({ code: 0, stderr: expect.stringContaining('could not check') });
    const hung = await run('', undefined, { HERALD_AUDIT_COMMAND: 'sleep 30', HERALD_AUDIT_TIMEOUT_MS: '300' });
    expect(hung).toEqual({ code: 0, stderr: expect.stringContaining('could not check: no answer from `sleep 30` within 300 ms') });
  });

  it('runs the real npm audit, which against a registry that does not answer could not check', async () => {
    const env = { HERALD_AUDIT_COMMAND: '', npm_config_registry: 'http://127.0.0.1:1/', npm_config_fetch_retries: '0' };
    const { code, stderr } = await run('', undefined, env);
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.stringMatching(/could not check the production dependencies: .*ECONNREFUSED/) });
  }, 60_000);
});
