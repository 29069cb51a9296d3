import { z } from 'zod';
import { HeraldError } from '@herald/core';
import { fieldName, isPlainObject, parseOrThrow } from '@herald/http';
import { segmentRefs, topicRefs } from './contact-input.validation';
import type { ContactProperty, PropertyType, TopicSubscription } from './contact.types';
import type { OnConflict } from './contact-imports.repository';

/** A multipart/form-data body as the API hands it on: text fields, and files by field name. */
export interface MultipartForm {
  fields: Record<string, string>;
  files: Record<string, { filename: string; type: string; content: Buffer }>;
}

export const isMultipartForm = (value: unknown): value is MultipartForm =>
  isPlainObject(value) && isPlainObject(value['fields']) && isPlainObject(value['files']);

/** Where each contact field is read from: a column index of the file, or null when the file has none. */
export interface ColumnPlan {
  email: number;
  firstName: number | null;
  lastName: number | null;
  unsubscribed: number | null;
  properties: { key: string; type: PropertyType; column: number; header: string }[];
}

export interface ImportRequest {
  csv: string;
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
function jsonField(form: MultipartForm, name: string): unknown {
  const raw = form.fields[name];
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'null') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw invalid(`The \`${name}\` field must be JSON.`);
  }
}

/** The form of POST /contacts/imports: `file` (CSV, UTF-8), `column_map`, `on_conflict`, `segments`, `topics`. */
export function validateImportForm(body: unknown): ImportRequest {
  if (!isMultipartForm(body)) throw invalid('The request must be multipart/form-data with a `file` field (the CSV).');
  const file = body.files['file'];
  const text = file ? file.content.toString('utf8') : body.fields['file'];
  if (text === undefined) throw new HeraldError('missing_required_field', 'The `file` field is required.');
  if (text.trim() === '') throw invalid('The `file` field is empty: it must be a CSV with a header line.');
  if (text.includes('\u0000') || text.includes('\ufffd')) throw invalid('The `file` field must be a CSV file in UTF-8.');
  const onConflict = body.fields['on_conflict'] || 'upsert';
  if (onConflict !== 'upsert' && onConflict !== 'skip') throw invalid('The `on_conflict` field must be `upsert` or `skip`.');
  const segments = jsonField(body, 'segments');
  const topics = jsonField(body, 'topics');
  const map = jsonField(body, 'column_map');
  return {
    csv: text,
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
