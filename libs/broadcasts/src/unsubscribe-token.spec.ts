import { randomBytes, randomUUID } from 'node:crypto';
import { UnsubscribeKeys } from './unsubscribe-token';

const keys = UnsubscribeKeys.fromConfig({ TRACKING_KEYS: [randomBytes(32).toString('base64')] });

describe('unsubscribe tokens', () => {
  it('a link token names its email and nothing else verifies', () => {
    const id = randomUUID();
    const token = keys.token(id);
    expect(token).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(keys.verifyToken(token)).toBe(id);
    // Every single-character change, a truncation and an extension fail.
    for (let i = 0; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(keys.verifyToken(changed)).toBeNull();
    }
    expect(keys.verifyToken(token.slice(0, -1))).toBeNull();
    expect(keys.verifyToken(`${token}A`)).toBeNull();
    expect(keys.verifyToken('')).toBeNull();
  });

  it('another key, or a rotated-out key, does not verify; a kept old key does', () => {
    const oldKey = randomBytes(32).toString('base64');
    const before = UnsubscribeKeys.fromConfig({ TRACKING_KEYS: [oldKey] });
    const id = randomUUID();
    const rotated = UnsubscribeKeys.fromConfig({ TRACKING_KEYS: [randomBytes(32).toString('base64'), oldKey] });
    expect(rotated.verifyToken(before.token(id))).toBe(id);
    expect(keys.verifyToken(before.token(id))).toBeNull();
  });

  it('a mailbox is lowercase, fits a local part, verifies in any case, and refuses a changed tag', () => {
    const id = randomUUID();
    const address = keys.mailbox(id, 'Send.Example.com');
    const [local, domain] = address.split('@');
    expect(local).toMatch(/^u-[0-9a-f]{32}-[a-z2-7]{16}$/);
    expect(local!.length).toBeLessThanOrEqual(64);
    expect(domain).toBe('send.example.com');
    expect(keys.verifyMailbox(address)).toBe(id);
    expect(keys.verifyMailbox(`<${address.toUpperCase()}>`)).toBe(id);
    // One character changed, always to a different one: first in the tag, then in the email id.
    const tampered = address.replace(/-([a-z2-7])([a-z2-7]{15})@/, (_, c: string, rest: string) => `-${c === 'a' ? 'b' : 'a'}${rest}@`);
    expect(tampered).not.toBe(address);
    expect(keys.verifyMailbox(tampered)).toBeNull();
    const otherId = address.replace(/^u-(.)/, (_, c: string) => `u-${c === '0' ? '1' : '0'}`);
    expect(otherId).not.toBe(address);
    expect(keys.verifyMailbox(otherId)).toBeNull();
  });

  it('a link token is not a mailbox tag and the other way round', () => {
    const id = randomUUID();
    const hex = id.replace(/-/g, '');
    expect(keys.verifyMailbox(`u-${hex}-${keys.token(id).slice(0, 16).toLowerCase()}@x.com`)).toBeNull();
  });
});
