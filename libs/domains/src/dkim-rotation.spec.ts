import { planActivation, planRetirement, rotatedAlgorithms, rotationInProgress } from './dkim-rotation';
import type { DkimKey } from './domain.types';

const day = (n: number) => new Date(Date.UTC(2026, 10, n));
const key = (id: string, fields: Partial<DkimKey>): DkimKey => ({
  id,
  domainId: 'd',
  selector: id,
  algorithm: 'rsa-sha256',
  publicKey: 'p',
  privateKeyEncrypted: Buffer.alloc(0),
  state: 'active',
  dnsStatus: 'verified',
  createdAt: day(1),
  activatedAt: day(1),
  retiredAt: null,
  ...fields,
});

describe('rotatedAlgorithms', () => {
  it('rotates every algorithm the domain signs with, RSA when none', () => {
    expect(rotatedAlgorithms([key('e', { algorithm: 'ed25519-sha256' }), key('r', {}), key('x', { state: 'retiring' })])).toEqual([
      'ed25519-sha256',
      'rsa-sha256',
    ]);
    expect(rotatedAlgorithms([key('p', { state: 'pending' })])).toEqual(['rsa-sha256']);
  });

  it('sees a rotation in progress while a key is pending', () => {
    expect(rotationInProgress([key('a', {}), key('b', { state: 'pending' })])).toBe(true);
    expect(rotationInProgress([key('a', {}), key('b', { state: 'retiring' })])).toBe(false);
  });
});

describe('planActivation', () => {
  it('activates a verified pending key and retires the active key of its algorithm only', () => {
    const keys = [
      key('rsa-old', {}),
      key('ed', { algorithm: 'ed25519-sha256' }),
      key('rsa-new', { state: 'pending', createdAt: day(5), activatedAt: null }),
    ];
    expect(planActivation(keys)).toEqual([
      { keyId: 'rsa-new', state: 'active' },
      { keyId: 'rsa-old', state: 'retiring' },
    ]);
  });

  it('leaves a pending key whose record has not verified', () => {
    for (const dnsStatus of ['not_started', 'pending', 'failed', 'temporary_failure'] as const) {
      expect(planActivation([key('old', {}), key('new', { state: 'pending', dnsStatus, activatedAt: null })])).toEqual([]);
    }
  });

  it('activates the newest of several verified pending keys of one algorithm', () => {
    const keys = [key('a', { state: 'pending', createdAt: day(2) }), key('b', { state: 'pending', createdAt: day(3) })];
    expect(planActivation(keys)).toEqual([{ keyId: 'b', state: 'active' }]);
  });
});

describe('planRetirement', () => {
  const keys = [
    key('old', { state: 'retiring', activatedAt: day(1) }),
    key('cur', { activatedAt: day(10) }),
    key('ed-old', { state: 'retiring', algorithm: 'ed25519-sha256' }),
  ];

  it('retires a key once its successor has been active for the grace period', () => {
    expect(planRetirement(keys, day(9))).toEqual([]);
    expect(planRetirement(keys, day(10))).toEqual([{ keyId: 'old', state: 'retired' }]);
  });

  it('keeps a retiring key without an active successor of its algorithm', () => {
    expect(planRetirement(keys, day(30)).map((c) => c.keyId)).not.toContain('ed-old');
  });
});
