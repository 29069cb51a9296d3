import { readChunk, type StoredPlan } from './contact-import-rows';
import { CsvUploadSplitter } from './csv-upload';

const plan: StoredPlan = { email: 0, firstName: 1, lastName: null, unsubscribed: null, properties: [], delimiter: ',' };

/** The file's parts as an upload stores them. */
function chunksOf(text: string, size: number) {
  const splitter = new CsvUploadSplitter(size);
  return [...splitter.write(text), ...splitter.end()];
}

describe('readChunk', () => {
  it("reads each part on its own with the file's line numbers, and refuses an address seen in a part before", () => {
    const text = 'email,name\na@x.io,A\nnope,N\n"b@x.io","two\nlines"\n\nA@X.io,Again\nc@x.io,C';
    const seen = new Map<string, number>();
    const [first, second, third] = chunksOf(text, 2).map((chunk) => readChunk(chunk, plan, seen));
    expect(first).toEqual({
      contacts: [expect.objectContaining({ email: 'a@x.io', firstName: 'A' })],
      rejected: [{ line: 3, email: null, reason: expect.stringContaining('not an email address') }],
      failed: 1,
      duplicates: 0,
    });
    expect(second).toEqual({
      contacts: [expect.objectContaining({ email: 'b@x.io', firstName: 'two\nlines' })],
      rejected: [{ line: 7, email: 'a@x.io', reason: 'The address appears on line 2 already.' }],
      failed: 0,
      duplicates: 1,
    });
    expect(third?.contacts).toEqual([expect.objectContaining({ email: 'c@x.io', firstName: 'C' })]);
    expect([...seen]).toEqual([
      ['a@x.io', 2],
      ['b@x.io', 4],
      ['c@x.io', 8],
    ]);
  });
});
