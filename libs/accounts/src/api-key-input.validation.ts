import { z } from 'zod';
import { isUuid } from '@herald/core';
import { checkedFirst, fail, isAbsent, isPlainObject, optional } from '@herald/http';
import { API_KEY_PERMISSIONS, type ApiKeyPermission } from './api-key.entity';
import { nameSchema } from './account-input.validation';

/*
 * The bodies of POST /api-keys and PATCH /api-keys/:id. A body that is not an object reads as
 * empty (so it is missing its name), as before these were schemas.
 */

export const MAX_KEY_NAME = 50;

const asObject = (body: unknown) => (isPlainObject(body) ? body : {});

const permission = checkedFirst((value, ctx) => {
  if (!(API_KEY_PERMISSIONS as readonly unknown[]).includes(value)) fail(ctx, 'Access must be "full_access" | "sending_access"', 'invalid_access');
}, z.enum(API_KEY_PERMISSIONS)).meta({ default: 'full_access', description: '`sending_access` keys may only call the send endpoints.' });

// Checked with the permission, below: a domain on a full-access key is refused whatever its form.
const domainId = z
  .unknown()
  .optional()
  .meta({ type: 'string', format: 'uuid', description: 'Only with `sending_access`: restricts the key to one domain.' });

export const createApiKeyBody = z
  .preprocess(asObject, z.object({ name: nameSchema(MAX_KEY_NAME), permission: optional(permission), domain_id: domainId }))
  .transform((body, ctx): { name: string; permission: ApiKeyPermission; domainId: string | null } => {
    const permission = body.permission ?? 'full_access';
    if (isAbsent(body.domain_id)) return { name: body.name, permission, domainId: null };
    if (permission !== 'sending_access') return fail(ctx, 'The `domain_id` field can only be used with `sending_access` permission.');
    if (typeof body.domain_id !== 'string' || !isUuid(body.domain_id)) return fail(ctx, 'The `domain_id` field must be a valid UUID.');
    return { name: body.name, permission, domainId: body.domain_id };
  })
  .meta({ example: { name: 'Production', permission: 'full_access' } });

/** Its one field is checked by ApiKeysService.rename with the same name schema. */
export const updateApiKeyBody = z
  .preprocess(asObject, z.object({ name: nameSchema(MAX_KEY_NAME) }))
  .meta({ example: { name: 'Production (rotated)' } });
