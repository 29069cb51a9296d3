import type { GetContactImportResponseSuccess, Resend } from 'resend';

const FINAL = new Set(['completed', 'failed']);

/**
 * The import once it is completed or failed, read through the SDK every `everyMs`: an upload is
 * answered 202 when its file is stored, and its rows are written in the background.
 */
export async function finishedImport(resend: Resend, id: string, timeoutMs = 60_000, everyMs = 50): Promise<GetContactImportResponseSuccess> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { data, error } = await resend.contacts.imports.get(id);
    if (error) throw new Error(`contact import ${id}: ${JSON.stringify(error)}`);
    if (FINAL.has(data!.status)) return data!;
    if (Date.now() > deadline) throw new Error(`contact import ${id} is still ${data!.status} after ${timeoutMs} ms: ${JSON.stringify(data)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
