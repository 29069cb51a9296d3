import { z } from 'zod';

/*
 * The parts Resend's response bodies are built from, as zod schemas. Each presenter declares
 * the shape it answers with from these, its return type is that shape, and /openapi.json is
 * generated from the same schemas: the document cannot describe a field the API does not send.
 */

/** A resource id (UUID v7 from newId, or v4). */
export const wireId = z.uuid().meta({ example: '4ef9a417-02e9-4d39-ad75-9611e0fcc33c' });

/** REST timestamps: UTC in Resend's `YYYY-MM-DD HH:MM:SS.ffffff+00` (restTimestamp of @herald/core). */
export const wireTimestamp = z
  .string()
  // Not `format: date-time`: generators would parse it as RFC 3339 and fail on the space and `+00`.
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/)
  .meta({
    description: "UTC, in Resend's format `YYYY-MM-DD HH:MM:SS.ffffff+00` (not RFC 3339).",
    example: '2026-04-03 22:13:42.674981+00',
  });

/** `{object: 'list', has_more, data}`: every list, paged or whole. */
export const wireList = <S extends z.ZodType>(item: S) => z.object({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) });

/** `{object, id}`: what an update, a cancel or a queued action answers. */
export const wireReference = <O extends string>(object: O) => z.object({ object: z.literal(object), id: wireId });

/** `{object, id, deleted: true}`: what a delete answers. */
export const wireDeleted = <O extends string>(object: O) => z.object({ object: z.literal(object), id: wireId, deleted: z.literal(true) });

/**
 * The shape a field checked by hand accepts, for JSON Schema output. Some fields are gated by
 * `z.unknown()` and checked in a transform so that each problem reads as Resend words it; `shape`
 * is the zod schema of what passes, rendered in the checker's place (io: 'input').
 */
export function documentedAs<S extends z.ZodType>(checker: S, shape: z.ZodType): S {
  const { $schema: _dialect, ...json } = z.toJSONSchema(shape, { io: 'input' });
  return checker.meta(json) as S;
}
