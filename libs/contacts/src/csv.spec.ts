import { csvRecords, withoutBom } from './csv';

const all = (text: string) => [...csvRecords(withoutBom(text))].map(({ line, fields }) => ({ line, fields }));

describe('csvRecords', () => {
  it('reads plain, quoted and multi-line fields, with CRLF and a byte order mark', () => {
    expect(all('\ufeffemail,name\r\na@x.io,"Doe, Jane"\r\nb@x.io,"say ""hi""\nthere"\r\n')).toEqual([
      { line: 1, fields: ['email', 'name'] },
      { line: 2, fields: ['a@x.io', 'Doe, Jane'] },
      { line: 3, fields: ['b@x.io', 'say "hi"\nthere'] },
    ]);
  });

  it('skips blank lines, keeps empty fields and counts lines across quoted breaks', () => {
    expect(all('email,first\n\na@x.io,\n"multi\nline",x\nc@x.io,y')).toEqual([
      { line: 1, fields: ['email', 'first'] },
      { line: 3, fields: ['a@x.io', ''] },
      { line: 4, fields: ['multi\nline', 'x'] },
      { line: 6, fields: ['c@x.io', 'y'] },
    ]);
  });

  it('takes `;` as the delimiter when the header uses it', () => {
    expect(all('email;first_name\na@x.io;Ann')).toEqual([
      { line: 1, fields: ['email', 'first_name'] },
      { line: 2, fields: ['a@x.io', 'Ann'] },
    ]);
  });

  it('ends each record where the next begins, so a file splits into parts read on their own with their line numbers', () => {
    const text = 'email;name\n"a@x.io";"two\nlines"\r\n\nb@x.io;B\nc@x.io;C';
    const records = [...csvRecords(text)];
    expect(records.map((r) => [r.line, r.end, r.endLine])).toEqual([
      [1, 11, 2],
      [2, 33, 4],
      [5, 43, 6],
      [6, 51, 6],
    ]);
    const rest = [...csvRecords(text.slice(records[1]!.end), { delimiter: ';', firstLine: records[1]!.endLine })];
    expect(rest.map(({ line, fields }) => ({ line, fields }))).toEqual([
      { line: 5, fields: ['b@x.io', 'B'] },
      { line: 6, fields: ['c@x.io', 'C'] },
    ]);
  });
});
