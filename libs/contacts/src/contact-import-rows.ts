import { newId } from '@herald/core';
import { type CsvDelimiter, csvRecords } from './csv';
import type { ColumnPlan } from './contact-import.form';
import { MAX_NAME_LENGTH, MAX_PROPERTY_STRING, normalizeContactEmail } from './contact-input.validation';
import type { ImportedContact, RejectedRow } from './contact-imports.repository';
import type { PropertyValue } from './contact.types';

/** The column plan as an import stores it, with the delimiter its file uses (its parts are read without the header). */
export interface StoredPlan extends ColumnPlan {
  delimiter: CsvDelimiter;
}

/** A part of an upload as it is stored: whole records, the line the part starts on, how many records it holds. */
export interface ImportChunk {
  seq: number;
  firstLine: number;
  records: number;
  data: string;
}

/** What the rows of a part come to: the contacts to write, the rows refused (bad or repeated), and the counts of each. */
export interface ChunkRows {
  contacts: ImportedContact[];
  rejected: RejectedRow[];
  failed: number;
  duplicates: number;
}

const UNSUBSCRIBED_VALUES: Record<string, boolean> = { true: true, false: false, yes: true, no: false, '1': true, '0': false, y: true, n: false };

/**
 * The rows of a part, read against the plan. `seen` holds the addresses of the file read so far
 * (with their line) and takes this part's: a repeated address is refused, as the file's first
 * row with it is the one written.
 */
export function readChunk(chunk: Pick<ImportChunk, 'data' | 'firstLine'>, plan: StoredPlan, seen: Map<string, number>): ChunkRows {
  const rows: ChunkRows = { contacts: [], rejected: [], failed: 0, duplicates: 0 };
  for (const { line, fields } of csvRecords(chunk.data, { delimiter: plan.delimiter, firstLine: chunk.firstLine })) {
    const read = readRow(fields, plan);
    if ('reason' in read) {
      rows.failed++;
      rows.rejected.push({ line, email: read.email, reason: read.reason });
      continue;
    }
    const first = seen.get(read.contact.email);
    if (first !== undefined) {
      rows.duplicates++;
      rows.rejected.push({ line, email: read.contact.email, reason: `The address appears on line ${first} already.` });
      continue;
    }
    seen.set(read.contact.email, line);
    rows.contacts.push({ id: newId(), ...read.contact });
  }
  return rows;
}

/** One CSV row read against the plan: the contact to write, or the reason it is refused. */
export function readRow(fields: string[], plan: ColumnPlan): { contact: Omit<ImportedContact, 'id'> } | { reason: string; email: string | null } {
  const cell = (index: number | null) => (index === null ? '' : (fields[index] ?? '').trim());
  const rawEmail = cell(plan.email);
  const email = normalizeContactEmail(rawEmail);
  if (!rawEmail) return { reason: 'The `email` cell is empty.', email: null };
  if (!email) return { reason: `The \`email\` cell is not an email address (${JSON.stringify(rawEmail.slice(0, 100))}).`, email: null };
  const firstName = cell(plan.firstName) || null;
  const lastName = cell(plan.lastName) || null;
  if ((firstName?.length ?? 0) > MAX_NAME_LENGTH || (lastName?.length ?? 0) > MAX_NAME_LENGTH) {
    return { reason: `A name is longer than ${MAX_NAME_LENGTH} characters.`, email };
  }
  const rawUnsubscribed = cell(plan.unsubscribed).toLowerCase();
  const unsubscribed = rawUnsubscribed === '' ? null : UNSUBSCRIBED_VALUES[rawUnsubscribed];
  if (unsubscribed === undefined)
    return { reason: `The \`unsubscribed\` cell must be true or false (${JSON.stringify(rawUnsubscribed.slice(0, 20))}).`, email };
  const properties: Record<string, PropertyValue> = {};
  for (const property of plan.properties) {
    const value = cell(property.column);
    if (value === '') continue;
    if (property.type === 'number') {
      const number = Number(value);
      if (!Number.isFinite(number)) return { reason: `The \`${property.header}\` cell must be a number (property \`${property.key}\`).`, email };
      properties[property.key] = number;
    } else {
      if (value.length > MAX_PROPERTY_STRING)
        return { reason: `The \`${property.header}\` cell is longer than ${MAX_PROPERTY_STRING} characters.`, email };
      properties[property.key] = value;
    }
  }
  return { contact: { email, firstName, lastName, unsubscribed, properties } };
}
