import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** The document as JSON: the specs walk it generically, so a typed model would only get in the way. */
export type Json = any;

const DOC_ID = 'https://herald.test/openapi.json';

/**
 * /openapi.json as the specs read it: its operations by route (`post /emails/{id}/cancel`), its
 * schemas, and a JSON Schema 2020-12 validator (Ajv, with the formats) that checks values against
 * any schema of the document, $refs resolved.
 */
export class OpenApiDocument {
  readonly ajv: Ajv2020;

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  operations(): [string, Json][] {
    return Object.entries(this.doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]): [string, Json] => [`${method} ${path}`, op]),
    );
  }

  operation(route: string): Json {
    const [method, path] = route.split(' ');
    return this.doc.paths[path!][method!];
  }

  schema(name: string): Json {
    return this.doc.components.schemas[name];
  }

  /** A node with its `$ref`s followed. */
  resolve(node: Json): Json {
    if (typeof node?.$ref !== 'string') return node;
    const keys = node.$ref.replace(/^#\//, '').split('/');
    return this.resolve(keys.reduce((at: Json, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc));
  }

  /** The absolute JSON pointer of a place in an operation: `pointer('get /emails', 'responses', '200')`. */
  pointer(route: string, ...rest: string[]): string {
    const [method, path] = route.split(' ');
    const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
    return `${DOC_ID}#/${['paths', path!, method!, ...rest].map(escape).join('/')}`;
  }

  /** What is wrong with `value` against the schema at `location` (an absolute pointer); [] when it is valid. */
  problemsAt(location: string, value: unknown): string[] {
    const validate = this.ajv.getSchema(location) ?? this.ajv.compile({ $ref: location });
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '$'} ${e.message} ${JSON.stringify(e.params)}`);
  }

  /** Against a component schema. */
  problemsOf(name: string, value: unknown): string[] {
    return this.problemsAt(`${DOC_ID}#/components/schemas/${name}`, value);
  }

  /** Against the JSON schema a route documents for `status`. */
  responseProblems(route: string, status: number | string, value: unknown): string[] {
    return this.problemsAt(this.pointer(route, 'responses', String(status), 'content', 'application/json', 'schema'), value);
  }

  /** What a documented schema says an example value is: its own example, else one built from its parts'. */
  exampleOf(schema: Json): unknown {
    const s = this.resolve(schema);
    if (s.example !== undefined) return s.example;
    if (s.type === 'array' && s.items) return [this.exampleOf(s.items)];
    if (s.type === 'object' && s.properties) {
      const entries = Object.entries(s.properties as Json).map(([key, value]) => [key, this.exampleOf(value)]);
      return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
    }
    return undefined;
  }
}
