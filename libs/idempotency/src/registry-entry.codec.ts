/**
 * The value stored in Redis under one idempotency key: either an in-flight marker (short TTL,
 * owned by one lease) or the final record (the 24 h replay). Both carry the request hash so a
 * different payload is recognised in either state.
 */
export type RegistryEntry =
  | { readonly state: 'in_flight'; readonly requestHash: string; readonly token: string; readonly deadline?: number }
  | { readonly state: 'done'; readonly requestHash: string; readonly statusCode: number; readonly body: unknown };

/**
 * Deterministic for a given hash and token: the Lua scripts compare the stored value with this
 * exact string to decide whether a lease still owns the key, so it must be rebuilt byte for byte.
 */
export function encodeInFlight(requestHash: string, token: string, deadline: number): string {
  return JSON.stringify({ state: 'in_flight', requestHash, token, deadline });
}

export function encodeDone(requestHash: string, statusCode: number, body: unknown): string {
  return JSON.stringify({ state: 'done', requestHash, statusCode, body });
}

/** Fails loudly on a value Herald did not write: guessing could replay or send the wrong thing. */
export function decodeEntry(raw: string): RegistryEntry {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error('idempotency registry: stored value is not JSON');
  }
  const v = value as Record<string, unknown>;
  if (typeof v === 'object' && v !== null && typeof v.requestHash === 'string') {
    if (v.state === 'in_flight' && typeof v.token === 'string') {
      // Markers written before deadlines existed have none: their TTL alone ends them.
      return { state: 'in_flight', requestHash: v.requestHash, token: v.token, ...(typeof v.deadline === 'number' && { deadline: v.deadline }) };
    }
    if (v.state === 'done' && typeof v.statusCode === 'number') {
      return { state: 'done', requestHash: v.requestHash, statusCode: v.statusCode, body: v.body };
    }
  }
  throw new Error('idempotency registry: stored value has an unknown shape');
}
