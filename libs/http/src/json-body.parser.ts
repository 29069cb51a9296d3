import { HeraldError } from '@herald/core';

/**
 * How deep arrays and objects may nest in a request body. Resend's deepest field (a batch item's
 * attachment content as a serialized Buffer: body → email → attachments → attachment → content →
 * data) is six levels; the margin is for what other endpoints may add. Anything deeper is refused
 * before it is parsed, so nothing downstream (NUL check, validators, request hash, idempotency,
 * JSON columns) ever holds a value deep enough to exhaust the stack.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * How many arrays and objects one request body may hold. A batch of 100 emails with every list
 * field full holds about 10,000; a 60 MB body of empty objects would hold 20 million, and
 * building them takes over a gigabyte of heap (a few such requests at once would end every role
 * of the process). Refused before parsing, like depth.
 */
export const MAX_JSON_CONTAINERS = 100_000;

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d;

/**
 * The body of a JSON request: `undefined` when it is empty or blank (Resend's clients send
 * `Content-Type: application/json` with no body on cancel/verify/delete), otherwise the parsed
 * value. Throws a `validation_error` for text that is not JSON, nests deeper than
 * MAX_JSON_DEPTH, or holds a NUL character anywhere (Postgres text cannot store one).
 */
export function parseJsonBody(text: string): unknown {
  // JSON.parse skips surrounding whitespace itself; trim() would copy a large body to find none.
  if (/^\s*$/.test(text)) return undefined;
  const shape = jsonShapeExceeds(text, MAX_JSON_DEPTH, MAX_JSON_CONTAINERS);
  if (shape === 'depth') {
    throw new HeraldError('validation_error', `The request body must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  if (shape === 'containers') {
    throw new HeraldError('validation_error', `The request body must not hold more than ${MAX_JSON_CONTAINERS} arrays and objects.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HeraldError('validation_error', 'The request body is not valid JSON.');
  }
  // JSON can only carry a NUL as the escape \u0000, so the cheap text search finds every
  // candidate; the walk tells a real NUL from an escaped backslash followed by `u0000`.
  const where = text.includes('\\u0000') ? nulPath(parsed) : null;
  if (where !== null) {
    throw new HeraldError('validation_error', `The \`${where || 'body'}\` field must not contain NUL (\\u0000) characters.`);
  }
  return parsed;
}

/**
 * Whether arrays and objects nest more than `depthLimit` deep, or number more than `countLimit`,
 * in JSON text, read in one pass without recursion. Brackets inside strings do not count; a
 * string is skipped with indexOf, so a large base64 attachment costs about what finding its
 * closing quote costs. About a third of what JSON.parse takes on a batch of emails. Text that is
 * not JSON gets an answer too (JSON.parse refuses it afterwards).
 */
export function jsonShapeExceeds(text: string, depthLimit: number, countLimit = Infinity): 'depth' | 'containers' | null {
  let depth = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) i = afterString(text, i + 1) - 1;
    else if (char === OPEN_ARRAY || char === OPEN_OBJECT) {
      if (++depth > depthLimit) return 'depth';
      if (++count > countLimit) return 'containers';
    } else if (char === CLOSE_ARRAY || char === CLOSE_OBJECT) depth--;
  }
  return null;
}

/** The index after the quote that closes the string starting at `from` (text.length if none does). */
function afterString(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
  }
  return text.length;
}

interface Visit {
  value: unknown;
  path: string;
  /** The object member name this value sits under, checked when the value is visited. */
  key?: string;
}

/**
 * The path (`attachments[0].filename`) of the first string or member name holding a NUL
 * character, in document order; '' for the body itself; null if there is none. Walks with an
 * explicit stack: the depth limit already bounds recursion, but request handling should not
 * depend on that.
 */
export function nulPath(root: unknown): string | null {
  const stack: Visit[] = [{ value: root, path: '' }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value, path, key } = visit;
    if (key?.includes('\0')) return path;
    if (typeof value === 'string') {
      if (value.includes('\0')) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        if (mayHoldNul(value[i])) stack.push({ value: value[i], path: `${path}[${i}]` });
      }
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, item] = entries[i];
        stack.push({ value: item, path: path ? `${path}.${name}` : name, key: name });
      }
    }
  }
  return null;
}

/** Numbers, booleans and null cannot: skipping them spares a path string per byte of a byte array. */
const mayHoldNul = (value: unknown) => typeof value === 'string' || (typeof value === 'object' && value !== null);
