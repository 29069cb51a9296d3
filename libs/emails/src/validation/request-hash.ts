import { createHash } from 'node:crypto';

/**
 * Idempotency compares payloads, not bytes: a retry from another client library may order keys
 * differently or space them otherwise. The hash is over canonical JSON (object keys sorted,
 * array order kept, values as JSON.stringify writes them, `undefined` members dropped).
 */
export function requestHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(body) ?? 'null')
    .digest('hex');
}

/** A piece of output: text written as is, or a value (already through toJSON) still to write. */
type Task = { text: string } | { value: unknown };

/**
 * Written with an explicit stack rather than recursion: the body is the client's, and however
 * deep it nests (the HTTP parser caps it, other callers may not) the hash must not overflow the
 * call stack.
 */
function canonicalJson(root: unknown): string | undefined {
  const first = plainOf(root);
  if (isOmitted(first)) return undefined;
  const out: string[] = [];
  const stack: Task[] = [{ value: first }];
  for (let task = stack.pop(); task !== undefined; task = stack.pop()) {
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    const { value } = task;
    if (Array.isArray(value)) {
      out.push('[');
      stack.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i--) {
        const item = plainOf(value[i]);
        stack.push(isOmitted(item) ? { text: 'null' } : { value: item });
        if (i > 0) stack.push({ text: ',' });
      }
    } else if (typeof value === 'object' && value !== null) {
      const members = Object.keys(value)
        .sort()
        .map((key): [string, unknown] => [key, plainOf((value as Record<string, unknown>)[key])])
        .filter(([, member]) => !isOmitted(member));
      out.push('{');
      stack.push({ text: '}' });
      for (let i = members.length - 1; i >= 0; i--) {
        const [key, member] = members[i];
        stack.push({ value: member }, { text: `${JSON.stringify(key)}:` });
        if (i > 0) stack.push({ text: ',' });
      }
    } else {
      out.push(JSON.stringify(value));
    }
  }
  return out.join('');
}

/** What JSON.stringify writes for a value: its toJSON() if it has one (a Date), else itself. */
const plainOf = (value: unknown): unknown => (hasToJson(value) ? value.toJSON() : value);

/** Values JSON.stringify leaves out of objects and writes as null in arrays. */
const isOmitted = (value: unknown) => value === undefined || typeof value === 'function' || typeof value === 'symbol';

const hasToJson = (value: unknown): value is { toJSON: () => unknown } =>
  typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
