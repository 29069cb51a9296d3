import { ClaimLeases, type RenewClaims } from './claim-leases';

const CLAIM_MS = 60_000;

describe('ClaimLeases: the fence before an SMTP transaction', () => {
  let clock: number;
  let leases: ClaimLeases;
  /** What the next renewal finds still held, as `token emailId`. */
  let stillHeld: Set<string>;
  let renewals: string[][];
  const renewClaims: RenewClaims = async (tokens) => {
    renewals.push(tokens);
    return [...stillHeld].map((key) => ({ token: key.split(' ')[0]!, emailId: key.split(' ')[1]! }));
  };
  const renewNow = () => leases.renew(renewClaims);

  beforeEach(() => {
    clock = 1_000;
    leases = new ClaimLeases(CLAIM_MS, () => clock);
    stillHeld = new Set();
    renewals = [];
  });

  it('holds a claim with more than a third of its lifetime left, without asking Postgres', async () => {
    const key = leases.hold('t1', 'e1', clock);
    clock += (CLAIM_MS * 2) / 3 - 1;
    expect(await leases.check(key, renewNow)).toBe('held');
    expect(renewals).toEqual([]);
  });

  it('asks for a renewal once the lease is short, and holds the claim the renewal confirms', async () => {
    const key = leases.hold('t1', 'e1', clock);
    clock += CLAIM_MS * 2; // the worker stalled: its keeper did not run
    stillHeld.add(key); // nobody took the email over meanwhile
    expect(await leases.check(key, renewNow)).toBe('held');
    expect(renewals).toEqual([['t1']]);
    // The renewal's lease counts from when it started: the next check needs no query.
    expect(await leases.check(key, renewNow)).toBe('held');
    expect(renewals).toHaveLength(1);
  });

  it('refuses a claim taken over, and keeps refusing it without asking again', async () => {
    const taken = leases.hold('t1', 'e1', clock);
    const kept = leases.hold('t1', 'e2', clock);
    clock += CLAIM_MS * 2;
    stillHeld.add(kept); // e1's rows carry another attempt's token now; e2's are still t1's
    expect(await leases.check(taken, renewNow)).toBe('taken_over');
    expect(await leases.check(kept, renewNow)).toBe('held');
    expect(renewals).toEqual([['t1']]);
    // A later renewal that finds t1 on some row cannot give e1 back.
    await leases.renew(renewClaims);
    expect(await leases.check(taken, renewNow)).toBe('taken_over');
  });

  it('answers unconfirmed when the renewal fails, and when it confirms too little', async () => {
    const key = leases.hold('t1', 'e1', clock);
    clock += CLAIM_MS * 2;
    expect(await leases.check(key, () => Promise.reject(new Error('Postgres is restarting')))).toBe('unconfirmed');
    // A renewal that started long ago and answered only now leaves less than the margin.
    stillHeld.add(key);
    const slowRenewal = async () => {
      const started = leases.renew(async (tokens) => {
        clock += CLAIM_MS; // the renewal took a whole lifetime to answer
        return renewClaims(tokens);
      });
      await started;
    };
    expect(await leases.check(key, slowRenewal)).toBe('unconfirmed');
  });

  it('renews each token once, and forgets a released claim', async () => {
    leases.hold('t1', 'e1', clock);
    const done = leases.hold('t1', 'e2', clock);
    leases.hold('t2', 'e3', clock);
    leases.release(done);
    expect(await leases.renew(renewClaims)).toBe(2);
    expect(renewals).toEqual([['t1', 't2']]);
    expect(leases.size).toBe(2);
  });
});
