import { z } from 'zod';
import { HeraldError, type HeraldErrorCode } from '@herald/core';

/*
 * Zod finds the problems; Resend decides how they read. This is the one place a zod issue becomes
 * a HeraldError, for every HTTP body and query. Every schema sets its own Resend-style message,
 * and custom issues carry the Resend error name in `params`, because one request can fail as
 * `invalid_from_address`, `invalid_attachment` or `validation_error`. Only the first issue is
 * reported, as Resend reports one problem per response.
 */

/** Records a problem from inside a zod transform; `return fail(...)` ends the transform. */
export function fail(ctx: z.RefinementCtx, message: string, code: HeraldErrorCode = 'validation_error'): never {
  ctx.addIssue({ code: 'custom', message, params: { heraldCode: code } });
  return z.NEVER;
}

/** The HeraldError a failed parse answers: its first issue, named by the code `fail` recorded. */
export function heraldErrorOf(error: z.ZodError, fallback = 'The request body is invalid.'): HeraldError {
  const issue = error.issues[0];
  const code: unknown = issue?.code === 'custom' ? issue.params?.['heraldCode'] : undefined;
  // Only `fail` sets heraldCode, always with a HeraldErrorCode.
  const name = typeof code === 'string' ? (code as HeraldErrorCode) : 'validation_error';
  return new HeraldError(name, issue?.message ?? fallback);
}

/** Parses `input` or throws the HeraldError of its first problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw heraldErrorOf(result.error);
  return result.data;
}

/** `['attachments', 0, 'content']` → `attachments[0].content`, the way clients spell the field. */
export function fieldName(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

export const mustBe = (field: string, what: string): string => `The \`${field}\` field must be ${what}.`;

/** Resend's wording for any address that does not parse, with the field name adapted. */
export const invalidAddress = (field: string): string =>
  `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` or ` + '`Name <email@example.com>` format.';

/** A zod error option that names the field by its path, for type mismatches and absences. */
export const typeError =
  (what: string) =>
  (issue: { path?: PropertyKey[]; input?: unknown }): string => {
    const field = fieldName(issue.path ?? []);
    return isAbsent(issue.input) ? `The \`${field}\` field is required.` : mustBe(field, what);
  };

/** JSON `null` means "not given" everywhere: hand-built payloads often carry null for unset options. */
export const isAbsent = (value: unknown): value is null | undefined => value === undefined || value === null;

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

/**
 * Runs `check` before `schema` parses, for what Resend reports first (an absent field, a list's
 * length before its items). A preprocess step, so JSON Schema output (io: 'input') still shows
 * `schema`: the document and the validator are one schema.
 */
export const checkedFirst = <S extends z.ZodType>(check: (value: unknown, ctx: z.RefinementCtx) => void, schema: S) =>
  z.preprocess((value, ctx) => {
    const before = ctx.issues?.length ?? 0;
    check(value, ctx);
    return (ctx.issues?.length ?? 0) > before ? z.NEVER : value;
  }, schema);

/** A required field: absent (or null) is Resend's `missing_required_field`, with `message`. */
export const required = <S extends z.ZodType>(schema: S, message: string) =>
  checkedFirst((value, ctx) => {
    if (isAbsent(value)) fail(ctx, message, 'missing_required_field');
  }, schema);

/** An optional field: null reads as absent (hand-built payloads often carry null for unset options). */
export const optional = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value) => (value === null ? undefined : value), schema.optional()).optional();

/** A list of 1–`max` items, its length checked before its items, with Resend's wording. */
export const listOf = <S extends z.ZodType>(field: string, item: S, max: number) =>
  checkedFirst((value, ctx) => {
    if (!Array.isArray(value)) fail(ctx, mustBe(field, 'an array'));
    else if (value.length === 0) fail(ctx, `The \`${field}\` field must contain at least 1 item.`);
    else if (value.length > max) fail(ctx, `The \`${field}\` field must contain at most ${max} items.`);
  }, z.array(item).min(1).max(max));

/** A request body: a JSON object (Resend's message when it is not), then `schema`. */
export const jsonBody = <S extends z.ZodType>(schema: S) =>
  checkedFirst((value, ctx) => {
    if (!isPlainObject(value)) fail(ctx, 'The request body must be a JSON object.');
  }, schema);
