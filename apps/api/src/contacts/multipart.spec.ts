import fc from 'fast-check';
import { multipartForm } from './multipart';

/** A FormData body as fetch encodes it, and its boundary. */
async function encoded(form: FormData): Promise<{ body: Buffer; boundary: string }> {
  const response = new Response(form);
  const boundary = /boundary=(.+)$/.exec(response.headers.get('content-type')!)![1]!;
  return { body: Buffer.from(await response.arrayBuffer()), boundary };
}

async function* pieces(body: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    yield body.subarray(at, cut);
    at = cut;
  }
  yield body.subarray(at);
}

async function read(body: Buffer, boundary: string, cuts: number[], limit = Infinity) {
  const parts: { name: string; filename: string | null; text: string }[] = [];
  for await (const part of multipartForm(pieces(body, cuts), boundary, limit).parts()) {
    const chunks: Buffer[] = [];
    for await (const bytes of part.body) chunks.push(bytes);
    parts.push({ name: part.name, filename: part.filename, text: Buffer.concat(chunks).toString('utf8') });
  }
  return parts;
}

describe('multipartForm', () => {
  it('reads the parts of a form as its bytes arrive, in any pieces', async () => {
    const form = new FormData();
    const csv = 'email,first_name\r\nann@example.com,"Ann\r\n--x"\r\n'.repeat(20);
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts 2.csv');
    form.append('on_conflict', 'skip');
    form.append('segments', JSON.stringify([{ id: 'ü' }]));
    const { body, boundary } = await encoded(form);
    const expected = [
      { name: 'file', filename: 'contacts 2.csv', text: csv },
      { name: 'on_conflict', filename: null, text: 'skip' },
      { name: 'segments', filename: null, text: '[{"id":"ü"}]' },
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: body.length }), { maxLength: 12 }), async (cuts) => {
        const parts = await read(body, boundary, cuts);
        expect(parts).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a body without its closing boundary, and one over the limit', async () => {
    const form = new FormData();
    form.append('file', 'email\na@x.io\n');
    const { body, boundary } = await encoded(form);
    await expect(read(body.subarray(0, body.length - 10), boundary, [])).rejects.toMatchObject({ code: 'validation_error' });
    await expect(read(body, boundary, [10, 20], 30)).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});
