import { z } from 'zod';
import { restTimestamp } from '@herald/core';
import { wireDeleted, wireId, wireList, wireReference, wireTimestamp } from '@herald/http';

/* Resend's wire shapes for API keys, each the zod schema its presenter answers (/openapi.json is generated from them). */

export const createdApiKeySchema = z.object({
  id: wireId,
  object: z.literal('api_key'),
  token: z.string().meta({ description: 'The key itself (`hr_...`). Shown only in this response.', example: 'hr_...' }),
});

/** One key as `GET /api-keys` lists it. */
export const apiKeySchema = z.object({
  id: wireId,
  name: z.string().meta({ example: 'Production' }),
  created_at: wireTimestamp,
  last_used_at: wireTimestamp.nullable(),
});

export const apiKeyListSchema = wireList(apiKeySchema).meta({ description: '`has_more` is always false: every key is listed.' });
export const apiKeyReferenceSchema = wireReference('api_key');
export const deletedApiKeySchema = wireDeleted('api_key');

export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;
export type ApiKeyListItem = z.infer<typeof apiKeySchema>;
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;
export type ApiKeyReference = z.infer<typeof apiKeyReferenceSchema>;
export type DeletedApiKey = z.infer<typeof deletedApiKeySchema>;

export const presentCreatedApiKey = ({ id, token }: { id: string; token: string }): CreatedApiKey => ({ id, object: 'api_key', token });

export const presentApiKey = (key: { id: string; name: string; createdAt: Date; lastUsedAt: Date | null }): ApiKeyListItem => ({
  id: key.id,
  name: key.name,
  created_at: restTimestamp(key.createdAt),
  last_used_at: restTimestamp(key.lastUsedAt),
});

export const presentApiKeyList = (keys: ApiKeyListItem[]): ApiKeyList => ({ object: 'list', has_more: false, data: keys });
export const presentApiKeyReference = (id: string): ApiKeyReference => ({ object: 'api_key', id });
export const presentDeletedApiKey = (id: string): DeletedApiKey => ({ object: 'api_key', id, deleted: true });
