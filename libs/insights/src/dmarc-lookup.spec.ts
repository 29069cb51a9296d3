import type { DmarcInspection, DmarcInspector, Domain } from '@herald/domains';
import { DmarcLookup } from './dmarc-lookup';

const report = (present: boolean, policy: 'none' | 'reject' | null = null) => ({
  present,
  record: present ? `v=DMARC1; p=${policy}` : null,
  policy,
  dkimAligned: true,
  spfAligned: true,
  checkedAt: '2026-11-26T00:00:00.000Z',
});

/** An inspector answering from a script, counting its lookups. */
function inspector(answers: DmarcInspection[]) {
  const asked: string[] = [];
  const fake = { inspect: async (domain: string, returnPath: string) => (asked.push(`${domain} ${returnPath}`), answers.shift()!) };
  return { lookup: new DmarcLookup(fake as unknown as DmarcInspector), asked };
}

describe('DmarcLookup', () => {
  it('asks once per domain within five minutes, then again', async () => {
    const { lookup, asked } = inspector([
      { kind: 'report', report: report(true, 'reject') },
      { kind: 'report', report: report(false) },
    ]);
    const now = Date.parse('2026-11-26T12:00:00Z');
    expect(await lookup.facts('Mail.Acme.com', null, now)).toEqual({ kind: 'found', record: 'v=DMARC1; p=reject', policy: 'reject' });
    expect(await lookup.facts('mail.acme.com', null, now + 299_000)).toEqual({ kind: 'found', record: 'v=DMARC1; p=reject', policy: 'reject' });
    expect(await lookup.facts('mail.acme.com', null, now + 301_000)).toEqual({ kind: 'missing' });
    expect(asked).toEqual(['mail.acme.com send.mail.acme.com', 'mail.acme.com send.mail.acme.com']);
  });

  it("falls back on the domain's last verification report when DNS gives no answer, and caches nothing", async () => {
    const { lookup, asked } = inspector([
      { kind: 'temporary', message: 'timeout' },
      { kind: 'temporary', message: 'timeout' },
      { kind: 'report', report: report(true, 'none') },
    ]);
    const domain = { customReturnPath: 'bounces', dmarc: report(true, 'none') } as Domain;
    expect(await lookup.facts('acme.com', domain)).toEqual({ kind: 'found', record: 'v=DMARC1; p=none', policy: 'none' });
    expect(await lookup.facts('acme.com', null)).toEqual({ kind: 'unknown' });
    expect(await lookup.facts('acme.com', null)).toEqual({ kind: 'found', record: 'v=DMARC1; p=none', policy: 'none' });
    expect(asked[0]).toBe('acme.com bounces.acme.com');
    expect(asked).toHaveLength(3);
  });
});
