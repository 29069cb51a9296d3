import type { FastifyInstance } from 'fastify';
import { HeraldError } from '@herald/core';
import type { MultipartForm } from '@herald/contacts';

/**
 * multipart/form-data bodies (POST /contacts/imports: the SDK sends the CSV as FormData), read
 * by the platform's own parser (undici's Response.formData) within the API's body limit, and
 * handed to the route as a MultipartForm: text fields and files by name.
 */
export function installMultipartParser(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    const contentType = request.headers['content-type'] ?? '';
    void readForm(body as Buffer, contentType).then(
      (form) => done(null, form),
      () => done(new HeraldError('validation_error', 'The multipart/form-data body cannot be read (a boundary or a part is malformed).'), undefined),
    );
  });
}

async function readForm(body: Buffer, contentType: string): Promise<MultipartForm> {
  const data = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  const form: MultipartForm = { fields: {}, files: {} };
  for (const [name, value] of data.entries()) {
    if (typeof value === 'string') form.fields[name] = value;
    else form.files[name] = { filename: value.name, type: value.type, content: Buffer.from(await value.arrayBuffer()) };
  }
  return form;
}
