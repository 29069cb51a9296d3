import { generateKeyPairSync } from 'node:crypto';
import type { ClaimedEmail } from '@herald/messages';
import { HmacSha256Key } from '@herald/core';
import { prepareMessage } from './prepare-message';
import type { SenderIdentity } from './sender-identity';

const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const identity = {
  signing: { domainName: 'acme.test', selector: 's1', privateKey },
  returnPathDomain: 'send.acme.test',
  requireTls: false,
} as SenderIdentity;

const email = (mime: Buffer | null): ClaimedEmail => ({
  id: '0190a8a0-0000-7000-8000-000000000001',
  teamId: 't',
  region: 'us-east-1',
  from: 'Acme <hi@acme.test>',
  subject: 'Built',
  messageId: '<built@acme.test>',
  tags: null,
  headers: null,
  createdAt: new Date(),
  token: 'x',
  generation: 1,
  firstClaim: true,
  to: ['a@example.com'],
  cc: null,
  replyTo: null,
  html: null,
  text: 'built from fields',
  dueAt: new Date(),
  recipients: [],
  attachments: [],
  mime,
});

describe('prepareMessage', () => {
  it('signs and sends a stored SMTP message as is, with CRLF line endings, keeping the client signature', async () => {
    const mime = Buffer.from('DKIM-Signature: v=1; d=client.test\nFrom: hi@acme.test\nSubject: As sent\n\nbody \xe9\n', 'latin1');
    const prepared = await prepareMessage(email(mime), identity, new HmacSha256Key(Buffer.alloc(32)), 1024 * 1024);
    if (prepared.kind !== 'ready') throw new Error(prepared.kind);
    const text = prepared.message.toString('latin1');
    expect(text).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=acme\.test; s=s1;/);
    expect(text.endsWith('\r\nDKIM-Signature: v=1; d=client.test\r\nFrom: hi@acme.test\r\nSubject: As sent\r\n\r\nbody \xe9\r\n')).toBe(true);
    expect(text).not.toContain('built from fields');
  });

  it('leaves CRLF messages byte for byte', async () => {
    const mime = Buffer.from('From: hi@acme.test\r\nSubject: x\r\n\r\nline\r\n');
    const prepared = await prepareMessage(email(mime), identity, new HmacSha256Key(Buffer.alloc(32)), 1024 * 1024);
    if (prepared.kind !== 'ready') throw new Error(prepared.kind);
    expect(prepared.message.subarray(prepared.message.length - mime.length).equals(mime)).toBe(true);
  });

  it('builds the message from the fields when there is no stored MIME', async () => {
    const prepared = await prepareMessage(email(null), identity, new HmacSha256Key(Buffer.alloc(32)), 1024 * 1024);
    if (prepared.kind !== 'ready') throw new Error(prepared.kind);
    expect(prepared.message.toString()).toContain('built from fields');
  });
});
