import type { DkimAlgorithm, DkimKey, DkimKeyState } from './domain.types';

/*
 * The life of a DKIM key, as pure decisions over a domain's keys (the repository applies them
 * under a lock on the domain):
 *
 *   pending ──(its record verified)──▶ active ──(a newer key of its algorithm activated)──▶ retiring
 *   retiring ──(grace period since the newer key activated)──▶ retired (record withdrawn)
 *
 * A domain's first keys are created active: until the domain verifies nothing is sent, and its
 * verification is what verifies them. Rotation creates pending keys beside the active ones, so
 * signing never switches to a selector receivers cannot find yet.
 */

/**
 * How long a replaced key stays published after its successor starts signing: long enough for
 * mail signed with it to be delivered (retries included) and checked again when forwarded.
 */
export const DKIM_RETIREMENT_GRACE_MS = 7 * 24 * 3600_000;

export interface KeyStateChange {
  keyId: string;
  state: DkimKeyState;
}

/** The algorithms a rotation replaces: those the domain signs with now (RSA if, oddly, none). */
export function rotatedAlgorithms(keys: readonly DkimKey[]): DkimAlgorithm[] {
  const active = new Set(keys.filter((k) => k.state === 'active').map((k) => k.algorithm));
  return active.size ? [...active].sort() : ['rsa-sha256'];
}

/** A rotation already waiting for its records: another would only add records to publish. */
export const rotationInProgress = (keys: readonly DkimKey[]): boolean => keys.some((k) => k.state === 'pending');

/**
 * Each pending key whose record verified becomes active (the newest, if several of one
 * algorithm did), and the keys it replaces, active ones of the same algorithm, start retiring.
 */
export function planActivation(keys: readonly DkimKey[]): KeyStateChange[] {
  const changes: KeyStateChange[] = [];
  for (const algorithm of new Set(keys.map((k) => k.algorithm))) {
    const ready = keys.filter((k) => k.algorithm === algorithm && k.state === 'pending' && k.dnsStatus === 'verified');
    const next = ready.reduce<DkimKey | null>((newest, k) => (newest && newest.createdAt > k.createdAt ? newest : k), null);
    if (!next) continue;
    changes.push({ keyId: next.id, state: 'active' });
    for (const old of keys) {
      if (old.algorithm === algorithm && old.state === 'active') changes.push({ keyId: old.id, state: 'retiring' });
    }
  }
  return changes;
}

/**
 * A retiring key is retired once the key that replaced it (an active key of its algorithm) was
 * activated at `olderThan` or before: mail signed with the old key before the switch has had
 * the grace period to be delivered and checked. A retiring key with no active successor stays.
 */
export function planRetirement(keys: readonly DkimKey[], olderThan: Date): KeyStateChange[] {
  return keys
    .filter((k) => k.state === 'retiring')
    .filter((k) => keys.some((s) => s.algorithm === k.algorithm && s.state === 'active' && s.activatedAt !== null && s.activatedAt <= olderThan))
    .map((k) => ({ keyId: k.id, state: 'retired' }));
}
