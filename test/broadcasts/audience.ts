import type { ContactImportCounts, CreateContactImportOptions, Resend } from 'resend';
import { finishedImport } from '../support/contact-imports';

/** A CSV cell, quoted (so commas, quotes and `<&>` pass as they are); null is an empty cell. */
const cell = (value: string | number | boolean | null) => `"${String(value ?? '').replace(/"/g, '""')}"`;

/** A team's contacts, segment, topic and properties for a broadcast test, made through the `resend` SDK. */
export class TestAudience {
  constructor(private readonly resend: Resend) {}

  async segment(name = 'Newsletter'): Promise<string> {
    return idOf(await this.resend.segments.create({ name }), 'segment');
  }

  async topic(
    name = 'Product news',
    defaultSubscription: 'opt_in' | 'opt_out' = 'opt_in',
    visibility: 'public' | 'private' = 'public',
  ): Promise<string> {
    return idOf(await this.resend.topics.create({ name, defaultSubscription, visibility } as never), 'topic');
  }

  async property(key: string, fallbackValue: string | number | null, type: 'string' | 'number' = 'string'): Promise<void> {
    idOf(await this.resend.contactProperties.create({ key, type, fallbackValue } as never), 'contact property');
  }

  /** `body` in the wire's snake_case (first_name, segments: [{id}], topics: [{id, subscription}]). */
  async contact(body: Record<string, unknown>): Promise<string> {
    const { first_name, last_name, ...rest } = body;
    return idOf(await this.resend.contacts.create({ ...rest, firstName: first_name, lastName: last_name } as never), 'contact');
  }

  /**
   * Many contacts at once: a CSV of `header` and `rows` through POST /contacts/imports (the SDK's
   * contacts.imports), into the segments and topics given, once it is written (in the background).
   * Throws unless every row was written.
   */
  async import(
    header: string[],
    rows: (string | number | boolean | null)[][],
    options: Omit<CreateContactImportOptions, 'file'> = {},
  ): Promise<ContactImportCounts> {
    const csv = [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n');
    const created = await this.resend.contacts.imports.create({ ...options, file: new Blob([csv], { type: 'text/csv' }) });
    const id = idOf(created, 'contact import');
    const data = await finishedImport(this.resend, id, 300_000);
    if (data.status !== 'completed' || data.counts.created + data.counts.updated !== rows.length)
      throw new Error(`contact import ${id} did not write every row: ${JSON.stringify(data)}`);
    return data.counts;
  }

  /** Many contacts, a few at a time. */
  async contacts(bodies: Record<string, unknown>[], concurrency = 8): Promise<string[]> {
    const ids: string[] = new Array(bodies.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < bodies.length) {
          const i = next++;
          ids[i] = await this.contact(bodies[i]!);
        }
      }),
    );
    return ids;
  }
}

function idOf(result: { data: unknown; error: unknown }, what: string): string {
  const id = (result.data as { id?: string } | null)?.id;
  if (!id) throw new Error(`creating a ${what} failed: ${JSON.stringify(result.error)}`);
  return id;
}
