import type { SchemaObject } from '@nestjs/swagger';
import { z } from 'zod';

/** A zod schema as an OpenAPI 3.1 schema object (JSON Schema 2020-12, which 3.1 adopts whole). */
export function jsonSchemaOf(schema: z.ZodType, extra: SchemaObject = {}): SchemaObject {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input' });
  return { ...(json as SchemaObject), ...extra };
}
