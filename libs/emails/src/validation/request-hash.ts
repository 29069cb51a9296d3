import { createHash } from 'node:crypto';

/**
 * Idempotency compares payloads, not bytes: a retry from another client library may order keys
 * differently or space them otherwise. The hash is over canonical JSON (object keys sorted,
 * array order kept, values as JSON.stringify writes them, `undefined` members dropped).
 */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body) ?? 'null').digest('hex');
}

function canonicalJson(value: unknown): string | undefined {
  const plain = hasToJson(value) ? value.toJSON() : value;
  if (Array.isArray(plain)) return `[${plain.map((item: unknown) => canonicalJson(item) ?? 'null').join(',')}]`;
  if (typeof plain === 'object' && plain !== null) {
    const members = Object.keys(plain)
      .sort()
      .flatMap((key) => {
        const member = canonicalJson((plain as Record<string, unknown>)[key]);
        return member === undefined ? [] : [`${JSON.stringify(key)}:${member}`];
      });
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(plain);
}

const hasToJson = (value: unknown): value is { toJSON: () => unknown } =>
  typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
