import { createHmac } from 'node:crypto';
import { newSigningSecret, ROTATION_OVERLAP_MS, signingSecrets, signPayload } from './webhook-secrets';

describe('webhook signing secrets', () => {
  it('are whsec_ + base64 of 32 random bytes, different each time', () => {
    const a = newSigningSecret();
    const b = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(a.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('sign the Standard Webhooks way: base64 HMAC-SHA256 of id.timestamp.body with the decoded key', () => {
    const secret = newSigningSecret();
    const body = '{"type":"email.sent"}';
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`msg_1.1764000000.${body}`)
      .digest('base64');
    expect(signPayload(secret, 'msg_1', 1764000000, body)).toBe(`v1,${expected}`);
    // A verifier holding the other secret does not accept it.
    expect(signPayload(newSigningSecret(), 'msg_1', 1764000000, body)).not.toBe(`v1,${expected}`);
  });

  it('keep the previous secret valid for 24 hours after a rotation, and only the current one after', () => {
    const rotatedAt = new Date('2026-11-25T12:00:00Z');
    const webhook = {
      signingSecret: 'whsec_new',
      previousSecret: 'whsec_old',
      previousSecretExpiresAt: new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS),
    };
    expect(signingSecrets(webhook, rotatedAt)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(webhook, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS - 1))).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(webhook, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS))).toEqual(['whsec_new']);
    expect(signingSecrets({ signingSecret: 'whsec_only', previousSecret: null, previousSecretExpiresAt: null }, rotatedAt)).toEqual(['whsec_only']);
  });
});
