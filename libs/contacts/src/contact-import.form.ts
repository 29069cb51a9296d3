import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { fieldName, isPlainObject, parseOrThrow } from '@herald/http';
import { segmentRefs, topicRefs } from './contact-input.validation';
import type { ContactProperty, PropertyType, TopicSubscription } from './contact.types';
import type { OnConflict } from './contact-imports.repository';

/** A part of a multipart/form-data body as it arrives: its name, its file name (a file part), its bytes. */
export interface FormPart {
  name: string;
  filename: string | null;
  body: AsyncIterable<Buffer>;
}

/** A multipart/form-data body as the API hands it on, read as it arrives: its parts in order, each read before the next. */
export interface StreamedForm {
  streamed: true;
  parts(): AsyncIterable<FormPart>;
}

export const isStreamedForm = (value: unknown): value is StreamedForm =>
  isPlainObject(value) && value['streamed'] === true && typeof value['parts'] === 'function';

/** Where each contact field is read from: a column index of the file, or null when the file has none. */
export interface ColumnPlan {
  email: number;
  firstName: number | null;
  lastName: number | null;
  unsubscribed: number | null;
  properties: { key: string; type: PropertyType; column: number; header: string }[];
}

/** The form's fields but the file, checked. */
export interface ImportRequest {
  columnMap: RawColumnMap;
  onConflict: OnConflict;
  segmentIds: string[];
  topics: { id: string; subscription: TopicSubscription }[];
}

const invalid = (message: string) => new HeraldError('validation_error', message);

const columnName = z.string({
  error: (issue) => `The \`${fieldName(['column_map', ...(issue.path ?? [])])}\` field must be a column name (a string).`,
});
const columnMapSchema = z
  .object(
    {
      email: columnName.optional(),
      first_name: columnName.optional(),
      last_name: columnName.optional(),
      unsubscribed: columnName.optional(),
      properties: z
        .record(
          z.string(),
          z.object({
            column: columnName,
            type: z
              .enum(['string', 'number', 'boolean'], {
                error: (issue) => `The \`${fieldName(['column_map', ...(issue.path ?? [])])}\` field must be \`string\` or \`number\`.`,
              })
              .optional(),
          }),
          { error: 'The `column_map.properties` field must be an object.' },
        )
        .optional(),
    },
    { error: 'The `column_map` field must be a JSON object.' },
  )
  .transform((map) => map);
type RawColumnMap = z.output<typeof columnMapSchema>;

/** A form field holding JSON (as the SDK sends `column_map`, `segments` and `topics`). */
function jsonField(fields: Record<string, string>, name: string): unknown {
  const raw = fields[name];
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'null') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw invalid(`The \`${name}\` field must be JSON.`);
  }
}

/*
 * The form as /openapi.json documents it (validateImportForm reads it: each problem worded as
 * Resend words it). JSON fields are strings holding JSON, as the SDK sends them.
 */
const jsonText = (description: string, example: unknown) => z.string().meta({ description, example: JSON.stringify(example) });
export const importFormSchema = z
  .object({
    file: z.string().meta({ format: 'binary', description: 'The CSV (UTF-8, a header line first): a file part, or a text field.' }),
    column_map: jsonText('JSON: which column holds each field, e.g. `{"email":"E-mail","properties":{"plan":{"column":"Plan"}}}`.', {
      email: 'email',
    }).optional(),
    on_conflict: z.enum(['upsert', 'skip']).optional().meta({ description: 'An address that is a contact already: updated (default) or skipped.' }),
    segments: jsonText('JSON: `[{"id": "…"}]`, segments every imported contact joins.', []).optional(),
    topics: jsonText('JSON: `[{"id": "…", "subscription": "opt_in"}]`, topic subscriptions of every imported contact.', []).optional(),
  })
  .meta({ example: { file: 'email,first_name\nada@example.com,Ada\ngrace@example.com,Grace\n', on_conflict: 'upsert' } });

/** The notice for a body that is not the import's form. */
export const NOT_A_FORM = 'The request must be multipart/form-data with a `file` field (the CSV).';

/**
 * The text fields of POST /contacts/imports' form: `column_map`, `on_conflict`, `segments`,
 * `topics` (the `file` is read as it arrives, by ContactImportsService).
 */
export function validateImportFields(fields: Record<string, string>): ImportRequest {
  const onConflict = fields['on_conflict'] || 'upsert';
  if (onConflict !== 'upsert' && onConflict !== 'skip') throw invalid('The `on_conflict` field must be `upsert` or `skip`.');
  const segments = jsonField(fields, 'segments');
  const topics = jsonField(fields, 'topics');
  const map = jsonField(fields, 'column_map');
  return {
    columnMap: map === undefined ? {} : parseOrThrow(columnMapSchema, map),
    onConflict,
    segmentIds: segments === undefined ? [] : [...new Set(parseNamed(segmentRefs, segments, 'segments').map((s) => s.id))],
    topics: topics === undefined ? [] : parseNamed(topicRefs, topics, 'topics'),
  };
}

/** Parses a nested JSON field, its issues named from the form field (`segments[0].id`). */
function parseNamed<S extends z.ZodType>(schema: S, value: unknown, field: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = fieldName([field, ...(issue?.path ?? [])]);
  throw invalid(issue?.path?.length ? `The \`${path}\` field is invalid: ${issue.message}` : `The \`${field}\` field must be a JSON array.`);
}

const HEADER_ALIASES: Record<'email' | 'first_name' | 'last_name' | 'unsubscribed', string[]> = {
  email: ['email', 'email_address', 'e-mail', 'email address'],
  first_name: ['first_name', 'firstname', 'first name'],
  last_name: ['last_name', 'lastname', 'last name'],
  unsubscribed: ['unsubscribed'],
};

/**
 * Which column each contact field comes from: `column_map`'s choice (a header of the file), else
 * the header of the same name (any case); custom properties from `column_map.properties`, else
 * from headers named like one of the team's properties.
 */
export function planColumns(header: string[], map: RawColumnMap, definitions: Map<string, ContactProperty>): ColumnPlan {
  const normalized = header.map((h) => h.trim().toLowerCase());
  const find = (field: 'email' | 'first_name' | 'last_name' | 'unsubscribed'): number | null => {
    const chosen = map[field];
    if (chosen !== undefined) {
      const index = header.findIndex((h) => h.trim() === chosen.trim());
      const loose = index >= 0 ? index : normalized.indexOf(chosen.trim().toLowerCase());
      if (loose < 0) throw invalid(`The \`column_map.${field}\` field names a column the file does not have (${JSON.stringify(chosen)}).`);
      return loose;
    }
    const index = normalized.findIndex((h) => HEADER_ALIASES[field].includes(h));
    return index >= 0 ? index : null;
  };
  const email = find('email');
  if (email === null) throw invalid('The `file` field has no `email` column: name one in `column_map.email`.');
  const properties: ColumnPlan['properties'] = [];
  for (const [key, mapping] of Object.entries(map.properties ?? {})) {
    const definition = definitions.get(key);
    if (!definition) throw invalid(`The \`column_map.properties.${key}\` field is not a contact property of this team; create it first.`);
    if (mapping.type && mapping.type !== definition.type) {
      throw invalid(`The \`column_map.properties.${key}.type\` field must be \`${definition.type}\`, the property's type.`);
    }
    const column = normalized.indexOf(mapping.column.trim().toLowerCase());
    if (column < 0)
      throw invalid(`The \`column_map.properties.${key}.column\` field names a column the file does not have (${JSON.stringify(mapping.column)}).`);
    properties.push({ key, type: definition.type, column, header: header[column] });
  }
  if (!map.properties) {
    normalized.forEach((h, column) => {
      const definition = definitions.get(header[column].trim()) ?? definitions.get(h);
      if (definition) properties.push({ key: definition.key, type: definition.type, column, header: header[column] });
    });
  }
  return { email, firstName: find('first_name'), lastName: find('last_name'), unsubscribed: find('unsubscribed'), properties };
}
