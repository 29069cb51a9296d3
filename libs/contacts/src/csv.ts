export type CsvDelimiter = ',' | ';';

/** A record of the file: the line it starts on, its fields, and where it ends (the offset and line of what follows it). */
export interface CsvRecord {
  line: number;
  fields: string[];
  end: number;
  endLine: number;
}

/** The text without its leading byte order mark, if it has one. */
export const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/**
 * RFC 4180 CSV, read one record at a time: quoted fields (with `""` for a quote, and line
 * breaks inside quotes), CRLF or LF line ends, and `,` or `;` as the delimiter (whichever the
 * header line uses, outside quotes, unless given). Each record comes with the line it starts on,
 * for the import's report (`firstLine` is the line `text` starts on: a part of a file, as an
 * import stores it, is read on its own). A whole file's byte order mark is for the caller to
 * remove (withoutBom).
 */
export function* csvRecords(input: string, options: { delimiter?: CsvDelimiter; firstLine?: number } = {}): Generator<CsvRecord> {
  const delimiter = options.delimiter ?? detectDelimiter(input);
  let i = 0;
  let line = options.firstLine ?? 1;
  while (i < input.length) {
    const start = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    let fieldStarted = false;
    for (; i < input.length; i++) {
      const c = input[i];
      if (quoted) {
        if (c === '"') {
          if (input[i + 1] === '"') {
            field += '"';
            i++;
          } else quoted = false;
        } else {
          if (c === '\n') line++;
          field += c;
        }
        continue;
      }
      if (c === '"' && !fieldStarted) {
        quoted = true;
        fieldStarted = true;
      } else if (c === delimiter) {
        fields.push(field);
        field = '';
        fieldStarted = false;
      } else if (c === '\r' && input[i + 1] === '\n') {
        continue;
      } else if (c === '\n' || c === '\r') {
        i++;
        line++;
        break;
      } else {
        field += c;
        fieldStarted = true;
      }
    }
    fields.push(field);
    // A blank line is no record.
    if (fields.length > 1 || fields[0].trim() !== '') yield { line: start, fields, end: i, endLine: line };
  }
}

/** The delimiter the header line uses (`,` unless it has more `;` outside quotes). */
export function detectDelimiter(input: string): CsvDelimiter {
  return scanHeaderLine(input).delimiter;
}

/** The same, and whether the input holds the whole header line (its end, outside quotes): else more text may change the answer. */
export function scanHeaderLine(input: string): { delimiter: CsvDelimiter; complete: boolean } {
  let quoted = false;
  let commas = 0;
  let semicolons = 0;
  let complete = false;
  for (const c of input) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) {
      complete = true;
      break;
    } else if (!quoted && c === ',') commas++;
    else if (!quoted && c === ';') semicolons++;
  }
  return { delimiter: semicolons > commas ? ';' : ',', complete };
}
