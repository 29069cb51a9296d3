/**
 * RFC 4180 CSV, read one record at a time: quoted fields (with `""` for a quote, and line
 * breaks inside quotes), CRLF or LF line ends, a leading byte order mark, and `,` or `;` as the
 * delimiter (whichever the header line uses, outside quotes). Each record comes with the line it
 * starts on, for the import's report.
 */
export function* csvRecords(text: string): Generator<{ line: number; fields: string[] }> {
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const delimiter = detectDelimiter(input);
  let i = 0;
  let line = 1;
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
    if (fields.length > 1 || fields[0].trim() !== '') yield { line: start, fields };
  }
}

function detectDelimiter(input: string): ',' | ';' {
  let quoted = false;
  let commas = 0;
  let semicolons = 0;
  for (const c of input) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) break;
    else if (!quoted && c === ',') commas++;
    else if (!quoted && c === ';') semicolons++;
  }
  return semicolons > commas ? ';' : ',';
}
