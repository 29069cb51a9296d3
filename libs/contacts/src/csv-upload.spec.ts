import fc from 'fast-check';
import { type CsvRecord, csvRecords, detectDelimiter, withoutBom } from './csv';
import type { ImportChunk } from './contact-import-rows';
import { CsvUploadSplitter } from './csv-upload';

/**
 * The records after the header (`records`, read from `text`, the header taken already), in parts
 * of `size` records: each part is the text from the end of the record before it to the end of
 * its last record, so it reads on its own from its first line (blank lines included).
 */
function* importChunks(text: string, header: CsvRecord, records: Iterator<CsvRecord>, size: number): Generator<ImportChunk> {
  let seq = 0;
  let start = header.end;
  let firstLine = header.endLine;
  let count = 0;
  for (let next = records.next(); !next.done; next = records.next()) {
    if (++count < size) continue;
    yield { seq: seq++, firstLine, records: count, data: text.slice(start, next.value.end) };
    start = next.value.end;
    firstLine = next.value.endLine;
    count = 0;
  }
  if (count) yield { seq, firstLine, records: count, data: text.slice(start) };
}

/** The parts of the whole text, read at once (the reference the splitter must match). */
function wholeParts(text: string, size: number) {
  const input = withoutBom(text);
  const records = csvRecords(input, { delimiter: detectDelimiter(input) });
  const header = records.next();
  return header.done ? { header: null, parts: [] } : { header: header.value.fields, parts: [...importChunks(input, header.value, records, size)] };
}

/** The parts of the text given in pieces cut at `cuts`. */
function streamedParts(text: string, size: number, cuts: number[]) {
  const splitter = new CsvUploadSplitter(size);
  const parts = [];
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parts.push(...splitter.write(text.slice(at, cut)));
    at = cut;
  }
  parts.push(...splitter.write(text.slice(at)), ...splitter.end());
  return { header: splitter.header, parts };
}

describe('CsvUploadSplitter', () => {
  it('cuts the records after the header into parts of whole records, each with its first line and count', () => {
    const text = 'email,name\na@x.io,A\n"b@x.io","two\nlines"\n\nc@x.io,C\nd@x.io,D\r\ne@x.io,E';
    expect(streamedParts(text, 2, []).parts).toEqual([
      { seq: 0, firstLine: 2, records: 2, data: 'a@x.io,A\n"b@x.io","two\nlines"\n' },
      { seq: 1, firstLine: 5, records: 2, data: '\nc@x.io,C\nd@x.io,D\r\n' },
      { seq: 2, firstLine: 8, records: 1, data: 'e@x.io,E' },
    ]);
    expect(streamedParts('email\na@x.io\nb@x.io\n', 10, []).parts).toEqual([{ seq: 0, firstLine: 2, records: 2, data: 'a@x.io\nb@x.io\n' }]);
  });

  it('cuts a file given in pieces into the parts of the whole file', () => {
    const text = '\ufeffemail;name\r\n"a@x.io";"two\r\nlines"\r\n\r\nb@x.io;B\nc@x.io;"C"\r\nd@x.io;D';
    const cuts = [1, 5, 13, 14, 20, 30, 31, 40, 41, 50];
    expect(streamedParts(text, 2, cuts)).toEqual(wholeParts(text, 2));
    expect(streamedParts(text, 2, cuts).parts.map((p) => [p.firstLine, p.records])).toEqual([
      [2, 2],
      [6, 2],
    ]);
  });

  it('knows no header in a blank file, and a header alone makes no part', () => {
    expect(streamedParts('\n\r\n  \n', 3, [1, 2])).toEqual({ header: null, parts: [] });
    expect(streamedParts('email,name', 3, [3])).toEqual({ header: ['email', 'name'], parts: [] });
  });

  it('matches the whole file for any text cut anywhere', () => {
    const cell = fc.oneof(
      fc.constantFrom('', 'a@x.io', 'B', ' ', '"q"', '"x,y"', '"l1\nl2"', '"a""b"', 'x"y', '"r\r\n"'),
      fc.string({ maxLength: 4 }),
    );
    const line = fc.array(cell, { minLength: 1, maxLength: 4 }).chain((cells) => fc.constantFrom(',', ';').map((d) => cells.join(d)));
    const file = fc
      .tuple(fc.array(line, { maxLength: 12 }), fc.array(fc.constantFrom('\n', '\r\n', '\r', '\n\n'), { minLength: 12, maxLength: 12 }), fc.boolean())
      .map(([lines, ends, bom]) => (bom ? '\ufeff' : '') + lines.map((l, i) => l + ends[i]).join(''));
    fc.assert(
      fc.property(file, fc.integer({ min: 1, max: 4 }), fc.array(fc.nat(), { maxLength: 6 }), (text, size, raw) => {
        const cuts = raw.map((n) => n % (text.length + 1));
        expect(streamedParts(text, size, cuts)).toEqual(wholeParts(text, size));
      }),
      { numRuns: 500 },
    );
  });
});
