import { Injectable, Logger } from '@nestjs/common';
import { HeraldError, newId, restTimestamp } from '@herald/core';
import { isPlainObject } from '@herald/http';
import { csvRecords } from './csv';
import { type ColumnPlan, planColumns, validateImportForm } from './contact-import.form';
import { MAX_NAME_LENGTH, MAX_PROPERTY_STRING, normalizeContactEmail, resourceId, validateListQuery } from './contact-input.validation';
import { wireList } from './contact.presenter';
import type { PropertyValue } from './contact.types';
import {
  type ContactImport,
  ContactImportsRepository,
  IMPORT_STATUSES,
  type ImportCounts,
  type ImportedContact,
  type ImportStatus,
  type RejectedRow,
} from './contact-imports.repository';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { ContactsService } from './contacts.service';

/** Rows written per transaction. */
export const IMPORT_CHUNK = 1000;
/** Rejected rows kept for the report (the counts stay exact beyond it). */
export const MAX_REPORTED_ROWS = 1000;

const notFound = () => new HeraldError('not_found', 'Contact import not found');

const UNSUBSCRIBED_VALUES: Record<string, boolean> = { true: true, false: false, yes: true, no: false, '1': true, '0': false, y: true, n: false };

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

/**
 * CSV imports of contacts (POST /contacts/imports and the dashboard's upload). The file is read
 * record by record and written in chunks of IMPORT_CHUNK rows, one transaction each, the counts
 * and the report of rejected rows recorded after each; the request answers once the import is
 * done. As at Resend, imports emit no contact events.
 */
@Injectable()
export class ContactImportsService {
  private readonly logger = new Logger(ContactImportsService.name);

  constructor(
    private readonly imports: ContactImportsRepository,
    private readonly properties: ContactPropertiesRepository,
    private readonly contacts: ContactsService,
  ) {}

  async create(teamId: string, body: unknown) {
    const request = validateImportForm(body);
    await this.contacts.checkSegments(teamId, request.segmentIds, 'segments');
    await this.contacts.checkTopics(
      teamId,
      request.topics.map((t) => t.id),
    );
    const records = csvRecords(request.csv);
    const header = records.next();
    if (header.done) throw new HeraldError('validation_error', 'The `file` field is empty: it must be a CSV with a header line.');
    const plan = planColumns(header.value.fields, request.columnMap, await this.properties.byKey(teamId));
    const started = await this.imports.insert(teamId, newId(), request.onConflict);
    const counts: ImportCounts = { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 };
    const rejected: RejectedRow[] = [];
    const reject = (row: RejectedRow) => void (rejected.length < MAX_REPORTED_ROWS && rejected.push(row));
    const seen = new Map<string, number>();
    let chunk: ImportedContact[] = [];
    const flush = async () => {
      const written = await this.write(teamId, chunk, request);
      counts.created += written.created;
      counts.updated += written.updated;
      counts.skipped += written.skipped;
      chunk = [];
      await this.imports.record(teamId, started.id, 'in_progress', counts, rejected);
    };
    try {
      for (const { line, fields } of records) {
        counts.total++;
        const read = readRow(fields, plan);
        if ('reason' in read) {
          counts.failed++;
          reject({ line, email: read.email, reason: read.reason });
          continue;
        }
        const first = seen.get(read.contact.email);
        if (first !== undefined) {
          counts.skipped++;
          reject({ line, email: read.contact.email, reason: `The address appears on line ${first} already.` });
          continue;
        }
        seen.set(read.contact.email, line);
        chunk.push({ id: newId(), ...read.contact });
        if (chunk.length >= IMPORT_CHUNK) await flush();
      }
      await flush();
      await this.imports.record(teamId, started.id, 'completed', counts, rejected);
    } catch (error) {
      this.logger.error(`contact import ${started.id} failed after ${counts.total} rows: ${String(error)}`);
      await this.imports.record(
        teamId,
        started.id,
        'failed',
        counts,
        rejected,
        'The import stopped on an internal error; the rows counted were written.',
      );
      throw error;
    }
    return { object: 'contact_import' as const, id: started.id };
  }

  async get(teamId: string, id: string) {
    const found = await this.imports.get(teamId, resourceId(id, 'contact import'));
    if (!found) throw notFound();
    return { ...presentImport(found), rejected_rows: found.rejectedRows };
  }

  async list(teamId: string, query: unknown) {
    const page = validateListQuery(query);
    const status = isPlainObject(query) ? query['status'] : undefined;
    if (status !== undefined && status !== '' && !(IMPORT_STATUSES as readonly unknown[]).includes(status)) {
      throw new HeraldError('validation_error', `The \`status\` parameter must be one of ${IMPORT_STATUSES.map((s) => `\`${s}\``).join(', ')}.`);
    }
    return wireList(await this.imports.listPage(teamId, page, (status || null) as ImportStatus | null), presentImport);
  }

  private async write(
    teamId: string,
    rows: ImportedContact[],
    request: { onConflict: string; segmentIds: string[]; topics: { id: string; subscription: 'opt_in' | 'opt_out' }[] },
  ) {
    if (!rows.length) return { created: 0, updated: 0, skipped: 0 };
    return this.imports.transaction(async (tx) => {
      const created = await this.imports.createNew(teamId, rows, tx);
      const rest = rows.filter((r) => !created.has(r.email));
      const updated = request.onConflict === 'upsert' ? await this.imports.updateExisting(teamId, rest, tx) : new Map<string, string>();
      const touched = [...created.values(), ...updated.values()];
      await this.imports.addMemberships(teamId, touched, request.segmentIds, request.topics, tx);
      return { created: created.size, updated: updated.size, skipped: rest.length - updated.size };
    });
  }
}

export function presentImport(found: ContactImport) {
  return {
    object: 'contact_import' as const,
    id: found.id,
    status: found.status,
    created_at: restTimestamp(found.createdAt),
    completed_at: restTimestamp(found.completedAt),
    counts: found.counts,
  };
}
