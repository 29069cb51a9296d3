import { csvRecords } from './csv';

const all = (text: string) => [...csvRecords(text)];

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
});
