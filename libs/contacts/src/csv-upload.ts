import { type CsvDelimiter, csvRecords, scanHeaderLine, withoutBom } from './csv';
import type { ImportChunk } from './contact-import-rows';

/**
 * A CSV upload cut into parts of `size` whole records as its text arrives, so neither the upload
 * nor the import ever holds the whole file: `write` takes the next piece of text (decoded) and
 * answers the parts it completed, `end` the last one. The first record is the header (its line
 * gives the delimiter). A record is known to be complete only once some text follows it (a
 * quoted field or a CRLF may go on in the next piece), so the latest record waits for the next
 * piece or the end. The parts are the ones the whole text read at once would be cut into.
 */
export class CsvUploadSplitter {
  /** Text received and not yet in a part; `scanned` of it holds `count` complete records, and ends on line `scannedLine`. */
  private pending = '';
  private pendingLine = 1;
  private scanned = 0;
  private scannedLine = 1;
  private count = 0;
  private seq = 0;
  private started = false;
  delimiter: CsvDelimiter = ',';
  header: string[] | null = null;
  /** Records after the header, in the parts answered so far. */
  records = 0;

  constructor(private readonly size: number) {}

  write(text: string): ImportChunk[] {
    if (!this.started && text.length) {
      this.started = true;
      text = withoutBom(text);
    }
    this.pending += text;
    return this.cut(false);
  }

  end(): ImportChunk[] {
    const parts = this.cut(true);
    if (this.header && this.count) parts.push(this.part(this.pending.length, this.scannedLine));
    return parts;
  }

  /** The parts completed by what is pending (every record counts as complete at the end). */
  private cut(atEnd: boolean): ImportChunk[] {
    if (!this.header && !this.readHeader(atEnd)) return [];
    const parts: ImportChunk[] = [];
    // Record ends are offsets into the text read here, which starts `offset` before the pending text (after a part is cut).
    let offset = this.scanned;
    const records = csvRecords(this.pending.slice(this.scanned), { delimiter: this.delimiter, firstLine: this.scannedLine });
    for (const record of records) {
      const end = offset + record.end;
      if (end === this.pending.length && !atEnd) break;
      this.scanned = end;
      this.scannedLine = record.endLine;
      if (++this.count < this.size) continue;
      parts.push(this.part(end, record.endLine));
      offset -= end;
    }
    return parts;
  }

  /** The header, once its record is complete: its fields and delimiter; the pending text starts after it. */
  private readHeader(atEnd: boolean): boolean {
    const { delimiter, complete } = scanHeaderLine(this.pending);
    if (!complete && !atEnd) return false;
    const first = csvRecords(this.pending, { delimiter }).next();
    if (first.done || (first.value.end === this.pending.length && !atEnd)) return false;
    this.delimiter = delimiter;
    this.header = first.value.fields;
    this.pending = this.pending.slice(first.value.end);
    this.pendingLine = this.scannedLine = first.value.endLine;
    return true;
  }

  /** The pending text up to `end` as the next part; what follows it stays pending. */
  private part(end: number, endLine: number): ImportChunk {
    const chunk = { seq: this.seq++, firstLine: this.pendingLine, records: this.count, data: this.pending.slice(0, end) };
    this.records += this.count;
    this.pending = this.pending.slice(end);
    this.pendingLine = this.scannedLine = endLine;
    this.scanned = 0;
    this.count = 0;
    return chunk;
  }
}
