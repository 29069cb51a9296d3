import { z } from 'zod';
import type { Insight } from './insight.types';

/* The wire shape of GET /emails/:id/insights (a Herald extension), from which /openapi.json is generated. */

export const insightSchema = z
  .object({
    id: z.string().meta({ description: 'The rule that found it, e.g. `plain-text-missing`.', example: 'plain-text-missing' }),
    severity: z.enum(['attention', 'improvement']).meta({
      description: '`attention`: likely to hurt delivery or inbox placement now; `improvement`: worth doing.',
      example: 'attention',
    }),
    found: z
      .string()
      .meta({ description: 'What was found, with the measured value.', example: 'The email has an HTML part and no plain-text part.' }),
    fix: z.string().meta({ description: 'How to fix it.', example: 'Send a `text` version too (multipart/alternative).' }),
  })
  .meta({ description: 'One deliverability finding about an email.' });

export const insightListSchema = z
  .object({ object: z.literal('list'), data: z.array(insightSchema) })
  .meta({ description: 'The findings, attention first; an empty list when there is nothing to fix.' });

export type InsightList = z.infer<typeof insightListSchema>;

export const presentInsights = (insights: Insight[]): InsightList => ({
  object: 'list',
  data: insights.map(({ id, severity, found, fix }) => ({ id, severity, found, fix })),
});
