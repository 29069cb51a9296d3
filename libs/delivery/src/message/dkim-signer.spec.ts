import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { signDkim } from './dkim-signer';

const MESSAGE = Buffer.from('From: hi@acme.test\r\nTo: jane@example.test\r\nSubject: Hi\r\n\r\nHello\r\n');
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privateKey = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicKey = pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
/** mailauth, the independent verifier, with the key record served without DNS. */
const verify = async (message: Buffer): Promise<string> => {
  const result = await dkimVerify(message, {
    resolver: async (name: string, type: string) => {
      if (type === 'TXT' && name === 's1._domainkey.acme.test') return [[`v=DKIM1; k=rsa; p=${publicKey}`]];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    },
  });
  return result.results[0]?.status?.result;
};

describe('signDkim', () => {
  it('prepends one relaxed/relaxed rsa-sha256 signature covering only the headers present, over-signing From', async () => {
    const signed = (await signDkim(MESSAGE, { domainName: 'acme.test', selector: 's1', privateKey })).toString();
    const signature = signed.slice(0, signed.indexOf('\r\nFrom:')).replace(/\r\n\s+/g, ' ');

    expect(signature).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=acme\.test; s=s1; t=\d+;/);
    // From once more than it occurs: a second From cannot be slipped in.
    expect(signature).toContain('h=from:to:subject:from;');
    expect(signed.endsWith(MESSAGE.toString())).toBe(true);
  });

  it.each([
    ['already canonical', 'Hello\r\nworld\r\n'],
    ['spaces and tabs to collapse, line-end spaces', 'Hello  \t world \r\n\tindented\r\nend   '],
    ['trailing empty lines', 'Hello\r\n\r\n\r\n'],
    ['no final line break', 'Hello'],
    ['empty', ''],
  ])('signs bodies mailauth verifies (%s)', async (_name, body) => {
    const message = Buffer.from(`From: hi@acme.test\r\nTo:  jane@example.test\r\nSubject: Hi\r\n   folded\r\n\r\n${body}`);
    expect(await verify(await signDkim(message, { domainName: 'acme.test', selector: 's1', privateKey }))).toBe('pass');
  });

  it('folds its own field so no line passes 78 characters, h= after a colon, and still verifies', async () => {
    const message = Buffer.from(
      'From: hi@acme.test\r\nTo: jane@example.test\r\nCc: bob@example.test\r\nReply-To: s@acme.test\r\nSubject: Hi\r\n' +
        'Date: Thu, 26 Nov 2026 00:00:00 +0000\r\nMessage-ID: <1@acme.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n' +
        'Content-Transfer-Encoding: 7bit\r\nList-Unsubscribe: <https://acme.test/u>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n\r\nHello\r\n',
    );
    const signed = (await signDkim(message, { domainName: 'acme.test', selector: 's1', privateKey })).toString();
    const field = signed.slice(0, signed.indexOf('\r\nFrom:'));
    expect(Math.max(...field.split('\r\n').map((line) => line.length))).toBeLessThanOrEqual(78);
    expect(field.replace(/\r\n\s+/g, '')).toContain(
      'h=from:to:cc:reply-to:subject:date:message-id:mime-version:content-type:content-transfer-encoding:list-unsubscribe:list-unsubscribe-post:from;',
    );
    expect(await verify(Buffer.from(signed))).toBe('pass');
  });

  it('fails verification once the signed body is changed (the verifier is really checking)', async () => {
    const signed = await signDkim(MESSAGE, { domainName: 'acme.test', selector: 's1', privateKey });
    // mailauth calls a body-hash mismatch "neutral" (RFC 6376 §6.3); anything but pass will do.
    expect(await verify(Buffer.from(signed.toString().replace('Hello', 'Hellp')))).not.toBe('pass');
  });

  it('refuses an unusable key instead of sending unsigned', async () => {
    await expect(signDkim(MESSAGE, { domainName: 'acme.test', selector: 's1', privateKey: 'not a key' })).rejects.toThrow(/not a usable private key/);
  });

  it('refuses a message without From', async () => {
    await expect(signDkim(Buffer.from('Subject: Hi\r\n\r\nHello\r\n'), { domainName: 'acme.test', selector: 's1', privateKey })).rejects.toThrow(
      /without a From/,
    );
  });
});
