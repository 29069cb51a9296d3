import { createHmac, randomBytes } from 'node:crypto';
import type { Webhook } from './webhook.types';

/** Standard Webhooks secrets: `whsec_` + base64 of the HMAC key. */
export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes (Standard Webhooks asks for 24–64). */
export const SECRET_BYTES = 32;
/** How long the secret before a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The secrets valid at `now`, current first: the dispatcher signs each delivery with all of them. */
export function signingSecrets(
  webhook: Pick<Webhook, 'signingSecret' | 'previousSecret' | 'previousSecretExpiresAt'>,
  now: Date = new Date(),
): string[] {
  const previousValid =
    webhook.previousSecret !== null && webhook.previousSecretExpiresAt !== null && webhook.previousSecretExpiresAt.getTime() > now.getTime();
  return previousValid ? [webhook.signingSecret, webhook.previousSecret as string] : [webhook.signingSecret];
}

/** `v1,<base64 HMAC-SHA256>` over `id.timestamp.body`, as Standard Webhooks (and Svix) sign. */
export function signPayload(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}
