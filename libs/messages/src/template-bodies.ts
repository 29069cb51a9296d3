import { filledBodies, type EmailTemplate } from './email-template';

/** The columns of an email that a template fills in, as a statement reads them. */
export interface TemplatedRow {
  html: string | null;
  text_body: string | null;
  template_id?: string | null;
  template_values?: string[] | null;
}

interface Queryable {
  query(sql: string, params: unknown[]): Promise<unknown>;
}

/** Templates never change once written (email-template.ts): a broadcast's delivery reads its own once per process. */
const cache = new Map<string, EmailTemplate>();
const CACHED = 64;

/** Fills in the html and text of the rows written from a template, in place; answers the rows. */
export async function fillTemplateBodies<R extends TemplatedRow>(db: Queryable, rows: R[]): Promise<R[]> {
  const missing = [...new Set(rows.flatMap((r) => (r.template_id && !cache.has(r.template_id) ? [r.template_id] : [])))];
  if (missing.length) {
    const found = (await db.query(`SELECT id, html, text_body FROM email_templates WHERE id = ANY($1::uuid[])`, [missing])) as {
      id: string;
      html: EmailTemplate['html'];
      text_body: EmailTemplate['text'];
    }[];
    for (const t of found) {
      if (cache.size >= CACHED) cache.delete(cache.keys().next().value!);
      cache.set(t.id, { id: t.id, html: t.html, text: t.text_body });
    }
  }
  for (const row of rows) {
    const template = row.template_id ? cache.get(row.template_id) : undefined;
    if (!template) continue;
    const { html, text } = filledBodies(template, row.template_values ?? []);
    row.html = html;
    row.text_body = text;
  }
  return rows;
}
