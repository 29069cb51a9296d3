import { Inject, Injectable } from '@nestjs/common';
import { HeraldError, newId, restTimestamp } from '@herald/core';
import { isPlainObject } from '@herald/http';
import type { StoredPlan } from './contact-import-rows';
import { readUpload } from './contact-import-upload';
import { isStreamedForm, NOT_A_FORM, planColumns, validateImportFields } from './contact-import.form';
import { resourceId, validateListQuery } from './contact-input.validation';
import { wireList } from './contact.presenter';
import { ContactImportJobsRepository } from './contact-import-jobs.repository';
import { ContactImportRunner } from './contact-import-runner.service';
import { type ContactImport, ContactImportsRepository, IMPORT_STATUSES, type ImportStatus } from './contact-imports.repository';
import { ContactPropertiesRepository } from './contact-properties.repository';
import { CONTACTS_CONFIG, type ContactsConfig } from './contacts.config';
import { ContactsService } from './contacts.service';

const notFound = () => new HeraldError('not_found', 'Contact import not found');

/**
 * CSV imports of contacts (POST /contacts/imports and the dashboard's upload). The upload is
 * stored as it arrives, in parts of CONTACT_IMPORT_CHUNK_ROWS records (readUpload); once the
 * whole form is read, its fields and the file's header line are checked (the errors a file can
 * be told at once: a 422 as before, and the parts stored are dropped), the import is recorded,
 * `queued`, and the request answers 202. ContactImportRunner writes the parts in the background,
 * the counts and the report of rejected rows growing with each. As at Resend, imports emit no
 * contact events.
 */
@Injectable()
export class ContactImportsService {
  constructor(
    @Inject(CONTACTS_CONFIG.token) private readonly config: ContactsConfig,
    private readonly imports: ContactImportsRepository,
    private readonly jobs: ContactImportJobsRepository,
    private readonly runner: ContactImportRunner,
    private readonly properties: ContactPropertiesRepository,
    private readonly contacts: ContactsService,
  ) {}

  async create(teamId: string, body: unknown) {
    if (!isStreamedForm(body)) throw new HeraldError('validation_error', NOT_A_FORM);
    const id = newId();
    try {
      const upload = await readUpload(body, this.config.CONTACT_IMPORT_CHUNK_ROWS, (chunks) => this.jobs.appendChunks(id, chunks));
      const request = validateImportFields(upload.fields);
      if (!upload.file) throw new HeraldError('missing_required_field', 'The `file` field is required.');
      if (!upload.header) throw new HeraldError('validation_error', 'The `file` field is empty: it must be a CSV with a header line.');
      await this.contacts.checkSegments(teamId, request.segmentIds, 'segments');
      await this.contacts.checkTopics(
        teamId,
        request.topics.map((t) => t.id),
      );
      const plan: StoredPlan = { ...planColumns(upload.header, request.columnMap, await this.properties.byKey(teamId)), delimiter: upload.delimiter };
      const settings = { onConflict: request.onConflict, plan, segmentIds: request.segmentIds, topics: request.topics };
      await this.jobs.insertQueued(teamId, id, settings, upload.total, upload.chunks);
      if (upload.chunks) this.runner.kick();
      return { object: 'contact_import' as const, id, status: (upload.chunks ? 'queued' : 'completed') as ImportStatus };
    } catch (error) {
      // A refused upload's parts are dropped now; the sweep would take them otherwise.
      await this.jobs.discardChunks(id).catch(() => undefined);
      throw error;
    }
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
