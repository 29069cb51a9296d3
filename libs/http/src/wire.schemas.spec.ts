import { z } from 'zod';
import { documentedAs, wireDeleted, wireList, wireTimestamp } from './wire.schemas';

const json = (schema: z.ZodType, io: 'input' | 'output' = 'input') => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io });
  return rest;
};

describe('wire schemas', () => {
  it('renders a hand-checked field as the shape it documents, and parses as the checker does', () => {
    const checker = z.unknown().transform((value) => (typeof value === 'string' ? value.length : -1));
    const field = documentedAs(checker, z.string().min(1).meta({ description: 'A name.' }));
    expect(json(z.object({ name: field }))).toEqual({
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, description: 'A name.' } },
      required: ['name'],
    });
    expect(field.parse('abc')).toBe(3);
    expect(field.parse(42)).toBe(-1);
  });

  it('builds the list and delete envelopes of every context', () => {
    expect(wireList(z.object({ id: z.string() })).parse({ object: 'list', has_more: false, data: [{ id: 'a' }] })).toEqual({
      object: 'list',
      has_more: false,
      data: [{ id: 'a' }],
    });
    expect(json(wireDeleted('domain'), 'output')).toMatchObject({
      required: ['object', 'id', 'deleted'],
      properties: { object: { const: 'domain' }, deleted: { const: true } },
      additionalProperties: false,
    });
  });

  it("accepts Resend's REST timestamps only", () => {
    expect(wireTimestamp.safeParse('2026-04-03 22:13:42.674000+00').success).toBe(true);
    expect(wireTimestamp.safeParse('2026-04-03T22:13:42.674Z').success).toBe(false);
  });
});
