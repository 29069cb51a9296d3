import { generateKeyPairSync } from 'node:crypto';
import { signDkim } from './dkim-signer';

const MESSAGE = Buffer.from('From: hi@acme.test\r\nTo: jane@example.test\r\nSubject: Hi\r\n\r\nHello\r\n');
const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('signDkim', () => {
  it('prepends one relaxed/relaxed rsa-sha256 signature covering only the headers present, over-signing From', async () => {
    const signed = (await signDkim(MESSAGE, { domainName: 'acme.test', selector: 's1', privateKey })).toString();
    const signature = signed.slice(0, signed.indexOf('\r\nFrom:')).replace(/\r\n\s+/g, ' ');

    expect(signature).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=acme\.test; s=s1; t=\d+;/);
    // From once more than it occurs: a second From cannot be slipped in.
    expect(signature).toContain('h=from:to:subject:from;');
    expect(signed.endsWith(MESSAGE.toString())).toBe(true);
  });

  it('refuses an unusable key instead of sending unsigned', async () => {
    await expect(signDkim(MESSAGE, { domainName: 'acme.test', selector: 's1', privateKey: 'not a key' })).rejects.toThrow(/not a usable private key/);
  });

  it('refuses a message without From', async () => {
    await expect(signDkim(Buffer.from('Subject: Hi\r\n\r\nHello\r\n'), { domainName: 'acme.test', selector: 's1', privateKey })).rejects.toThrow(/without a From/);
  });
});
