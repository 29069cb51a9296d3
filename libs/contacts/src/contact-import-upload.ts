import { TextDecoder } from 'node:util';
import { HeraldError } from '@herald/core';
import type { CsvDelimiter } from './csv';
import { CsvUploadSplitter } from './csv-upload';
import type { ImportChunk } from './contact-import-rows';
import type { StreamedForm } from './contact-import.form';

/** Characters of the file stored per statement while it arrives. */
const STORE_BATCH_CHARS = 1024 * 1024;
/** A text field of the form (`column_map`, `segments`, …) is JSON of a few hundred bytes; past this it is no field of the form. */
const MAX_FIELD_BYTES = 1024 * 1024;

/** What an upload came to once its body is read: the text fields, and the file's header and parts (stored). */
export interface StoredUpload {
  fields: Record<string, string>;
  /** Whether the form had a `file` part (or field). */
  file: boolean;
  header: string[] | null;
  delimiter: CsvDelimiter;
  total: number;
  chunks: number;
}

const invalid = (message: string) => new HeraldError('validation_error', message);
const notUtf8 = () => invalid('The `file` field must be a CSV file in UTF-8.');

/**
 * Reads the form as it arrives: the `file` part (a file, or a text field) is decoded and cut into
 * parts of `chunkRows` records, handed to `store` about a megabyte at a time while the next bytes
 * arrive (awaiting it holds the upload back); the other fields are kept. The file must be UTF-8
 * (a NUL, a malformed sequence or a U+FFFD is refused).
 */
export async function readUpload(form: StreamedForm, chunkRows: number, store: (chunks: ImportChunk[]) => Promise<void>): Promise<StoredUpload> {
  const fields: Record<string, string> = {};
  let splitter: CsvUploadSplitter | null = null;
  let chunks = 0;
  for await (const part of form.parts()) {
    if (part.name !== 'file' || splitter) {
      fields[part.name] = await fieldText(part.name, part.body);
      continue;
    }
    splitter = new CsvUploadSplitter(chunkRows);
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let batch: ImportChunk[] = [];
    let chars = 0;
    const take = async (parts: ImportChunk[], last: boolean) => {
      for (const chunk of parts) {
        batch.push(chunk);
        chars += chunk.data.length;
      }
      if (!batch.length || (!last && chars < STORE_BATCH_CHARS)) return;
      chunks += batch.length;
      await store(batch);
      batch = [];
      chars = 0;
    };
    for await (const bytes of part.body) await take(splitter.write(decode(decoder, bytes)), false);
    await take([...splitter.write(decode(decoder)), ...splitter.end()], true);
  }
  return {
    fields,
    file: splitter !== null,
    header: splitter?.header ?? null,
    delimiter: splitter?.delimiter ?? ',',
    total: splitter?.records ?? 0,
    chunks,
  };
}

function decode(decoder: TextDecoder, bytes?: Buffer): string {
  let text: string;
  try {
    text = bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
  } catch {
    throw notUtf8();
  }
  if (text.includes('\u0000') || text.includes('\ufffd')) throw notUtf8();
  return text;
}

async function fieldText(name: string, body: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const bytes of body) {
    size += bytes.length;
    if (size > MAX_FIELD_BYTES) throw invalid(`The \`${name}\` field is longer than ${MAX_FIELD_BYTES} bytes.`);
    parts.push(bytes);
  }
  return Buffer.concat(parts).toString('utf8');
}
