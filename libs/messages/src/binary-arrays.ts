/*
 * One-dimensional text and jsonb arrays in Postgres's binary array format (array_recv), for
 * node-postgres to send as they are: it sends a Buffer parameter as binary. Each element is
 * length-prefixed, so nothing is quoted here and nothing is parsed there, where an array
 * literal ('{"…","…"}') is escaped element by element in JavaScript and read character by
 * character by Postgres. The send path's insert passes a chunk's bodies (a megabyte for 1,000
 * broadcast emails) this way, as one parameter each: before, each body was a parameter of its
 * own, and planning a statement with 2,000 parameters took tens of milliseconds.
 *
 * The statement must cast the parameter to the same array type (`$1::text[]`, `$2::jsonb[]`):
 * Postgres checks the element type the buffer names.
 */

/**
 * A uuid, integer or timestamp array as a literal joined in one pass (node-postgres would build it
 * element by element, escaping each): only for elements that need no quoting (no space, comma,
 * quote, backslash or brace), such as uuids, numbers, ISO timestamps and `NULL`.
 */
export const plainArray = (values: readonly (string | number)[]): string => `{${values.join(',')}}`;

const BYTEA_OID = 17;
const TEXT_OID = 25;
const JSONB_OID = 3802;
/** jsonb's binary form is its text after a version byte. */
const JSONB_VERSION = 1;

/** A text[] parameter; null elements are NULL. */
export function textArrayParameter(values: readonly (string | null)[]): Buffer {
  return binaryArray(values, TEXT_OID, false);
}

/** A jsonb[] parameter from JSON texts; null elements are NULL. */
export function jsonbArrayParameter(values: readonly (string | null)[]): Buffer {
  return binaryArray(values, JSONB_OID, true);
}

/**
 * A bytea[] parameter (no NULL elements); an element given in parts is their concatenation,
 * written straight into the parameter.
 */
export function byteaArrayParameter(values: readonly (Buffer | readonly Buffer[])[]): Buffer {
  const elements = values.map((value) => (Buffer.isBuffer(value) ? [value] : value));
  const lengths = elements.map((parts) => parts.reduce((sum, part) => sum + part.length, 0));
  const out = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + 4 + length, values.length ? 20 : 12));
  out.writeInt32BE(values.length ? 1 : 0, 0); // dimensions
  out.writeInt32BE(0, 4); // no NULLs
  out.writeInt32BE(BYTEA_OID, 8);
  if (!values.length) return out;
  out.writeInt32BE(values.length, 12);
  out.writeInt32BE(1, 16);
  let at = 20;
  elements.forEach((parts, i) => {
    out.writeInt32BE(lengths[i]!, at);
    at += 4;
    for (const part of parts) at += part.copy(out, at);
  });
  return out;
}

function binaryArray(values: readonly (string | null)[], elementOid: number, jsonb: boolean): Buffer {
  const count = values.length;
  if (count === 0) {
    const empty = Buffer.alloc(12);
    empty.writeInt32BE(elementOid, 8);
    return empty;
  }
  const prefix = jsonb ? 1 : 0;
  const lengths = new Int32Array(count);
  let size = 20 + 4 * count;
  let hasNull = 0;
  for (let i = 0; i < count; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      lengths[i] = -1;
      hasNull = 1;
    } else {
      lengths[i] = Buffer.byteLength(value, 'utf8') + prefix;
      size += lengths[i]!;
    }
  }
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(1, 0); // dimensions
  out.writeInt32BE(hasNull, 4);
  out.writeInt32BE(elementOid, 8);
  out.writeInt32BE(count, 12); // elements in the one dimension
  out.writeInt32BE(1, 16); // its lower bound
  let at = 20;
  for (let i = 0; i < count; i++) {
    const length = lengths[i]!;
    out.writeInt32BE(length, at);
    at += 4;
    if (length < 0) continue;
    if (jsonb) out[at++] = JSONB_VERSION;
    at += out.write(values[i]!, at, 'utf8');
  }
  return out;
}
