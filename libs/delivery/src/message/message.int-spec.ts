import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authenticate } from 'mailauth';
import { addressAllowList } from '@herald/core';
import { TestDnsServer } from '@herald/testing';
import { signDkim, type DkimSigningKey } from './dkim-signer';
import { MessageBuildError } from './message-build-error';
import { buildMessage, type OutgoingEmail } from './message-builder';
import { returnPathAddress, verpKey } from './verp';

const EMAIL_ID = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
/** The attachment server listens on 127.0.0.1, which Herald refuses unless allowlisted (ATTACHMENT_ALLOWED_ADDRESSES). */
const LOOPBACK = addressAllowList(['127.0.0.0/8', '::1']);
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('buildMessage + signDkim, verified by mailauth', () => {
  let dns: TestDnsServer;
  let http: Server;
  let baseUrl: string;
  let key: DkimSigningKey;
  let resolver: Resolver;

  beforeAll(async () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    key = {
      domainName: 'acme.test',
      selector: 'herald1',
      privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const publicKey = pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    dns = await TestDnsServer.start();
    dns
      .set('herald1._domainkey.acme.test', 'TXT', [`v=DKIM1; k=rsa; p=${publicKey}`])
      .set('send.acme.test', 'TXT', ['v=spf1 ip4:127.0.0.1 -all'])
      .set('_dmarc.acme.test', 'TXT', ['v=DMARC1; p=reject']);
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([dns.address()]);

    http = createServer((request, response) => {
      if (request.url === '/files/report.pdf') {
        response.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from('%PDF-1.4 fetched'));
      } else if (request.url === '/huge.bin') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(4096));
      } else if (request.url === '/broken') {
        response.writeHead(503).end();
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await dns.close();
    await new Promise((resolve) => http.close(resolve));
  });

  const email = (overrides: Partial<OutgoingEmail> = {}): OutgoingEmail => ({
    id: EMAIL_ID,
    from: 'Acme <hi@acme.test>',
    to: ['Jane Doe <jane@example.test>'],
    cc: ['bob@example.test'],
    replyTo: ['Support <support@acme.test>'],
    subject: 'Your report — ready',
    html: '<p>Hello <img src="cid:logo"></p>\n<p>Bye</p>',
    text: 'Hello\nBye',
    headers: {
      'X-Entity-Ref-ID': 'ref-42',
      'List-Unsubscribe': '<https://acme.test/unsubscribe?token=abc123def456ghi789jkl012mno345pqr678stu901vwx234>, <mailto:unsub@acme.test>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Return-Path': '<attacker@evil.test>',
      Received: 'from forged',
      'DKIM-Signature': 'v=1; forged',
    },
    messageId: `<${EMAIL_ID}@acme.test>`,
    date: new Date('2026-03-01T10:00:00Z'),
    attachments: [
      { filename: 'notes.txt', contentType: 'text/plain', contentId: null, content: Buffer.from('some notes'), path: null },
      { filename: 'logo.png', contentType: 'image/png', contentId: 'logo', content: PNG, path: null },
      { filename: null, contentType: null, contentId: null, content: null, path: `${baseUrl}/files/report.pdf` },
    ],
    ...overrides,
  });

  it('builds a message that passes DKIM, SPF and DMARC', async () => {
    const message = await buildMessage(email(), { allowedAddresses: LOOPBACK });
    const signed = await signDkim(message, key);

    const result = await authenticate(signed, {
      ip: '127.0.0.1',
      helo: 'mta.test',
      sender: returnPathAddress(EMAIL_ID, 'send.acme.test', verpKey(undefined)),
      mta: 'mx.test',
      resolver: (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>,
    });

    expect(result.dkim.results[0].status.result).toBe('pass');
    expect(result.spf && result.spf.status.result).toBe('pass');
    expect(result.dmarc && result.dmarc.status.result).toBe('pass');
    const signature = /^DKIM-Signature:[^]*?(?=\r\n\S)/.exec(signed.toString())?.[0] ?? '';
    const h = /\bh=([^;]+);/.exec(signature.replace(/\r\n\s+/g, ''))?.[1].split(':') ?? [];
    expect(h).toEqual(
      expect.arrayContaining(['from', 'to', 'cc', 'reply-to', 'subject', 'date', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']),
    );
  });

  it('writes the headers Herald owns and passes the customer ones through', async () => {
    const text = (await buildMessage(email(), { allowedAddresses: LOOPBACK })).toString('latin1');
    const head = text.slice(0, text.indexOf('\r\n\r\n'));

    expect(text).not.toMatch(/(?<!\r)\n/);
    expect(head).toMatch(/^Message-ID: <3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b@acme\.test>$/m);
    expect(head).toMatch(/^Date: Sun, 01 Mar 2026 10:00:00 \+0000$/m);
    expect(head).toMatch(/^From: Acme <hi@acme\.test>$/m);
    expect(head).toMatch(/^Cc: bob@example\.test$/m);
    expect(head).toMatch(/^Reply-To: Support <support@acme\.test>$/m);
    expect(head).toMatch(/^X-Entity-Ref-ID: ref-42$/m);
    expect(head).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(head.replace(/\r\n\s+/g, ' ')).toContain('<https://acme.test/unsubscribe?token=abc123def456ghi789jkl012mno345pqr678stu901vwx234>');
    expect(head).not.toMatch(/^(Return-Path|Received|DKIM-Signature|Bcc):/im);
    expect(text.match(/^Message-ID:/gim)).toHaveLength(1);
  });

  it('makes content-id attachments inline in multipart/related and fetches path attachments', async () => {
    const text = (await buildMessage(email(), { allowedAddresses: LOOPBACK })).toString('latin1');

    const related = /Content-Type: multipart\/related;[^]*?boundary="([^"]+)"/.exec(text)?.[1] ?? '';
    const relatedPart = text.slice(text.indexOf(`--${related}\r\n`), text.indexOf(`--${related}--`));
    expect(relatedPart).toMatch(/Content-Type: image\/png; name=logo\.png\r\nContent-ID: <logo>\r\n[^]*?Content-Disposition: inline/);
    expect(text).toMatch(/Content-Type: application\/pdf; name=report\.pdf/);
    expect(text).toContain(Buffer.from('%PDF-1.4 fetched').toString('base64'));
  });

  it.each([
    ['a 404', '/missing.pdf', true],
    ['a 503', '/broken', false],
  ])('turns %s attachment URL into a MessageBuildError', async (_name, path, permanent) => {
    const attachments = [{ filename: 'x.pdf', contentType: null, contentId: null, content: null, path: `${baseUrl}${path}` }];
    const error: unknown = await buildMessage(email({ attachments }), { allowedAddresses: LOOPBACK }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessageBuildError);
    expect(error).toMatchObject({ permanent });
  });

  it('refuses invalid URLs permanently, unreachable hosts transiently and oversized downloads permanently', async () => {
    const attempt = (path: string, maxBytes?: number): Promise<unknown> =>
      buildMessage(email({ attachments: [{ filename: 'x', contentType: null, contentId: null, content: null, path }] }), {
        maxBytes,
        fetchTimeoutMs: 2000,
        allowedAddresses: LOOPBACK,
      }).catch((e: unknown) => e);
    expect(await attempt('file:///etc/passwd')).toMatchObject({ name: 'MessageBuildError', permanent: true });
    expect(await attempt('not a url')).toMatchObject({ name: 'MessageBuildError', permanent: true });
    expect(await attempt('http://127.0.0.1:1/x')).toMatchObject({ name: 'MessageBuildError', permanent: false });
    expect(await attempt(`${baseUrl}/huge.bin`, 1000)).toMatchObject({ name: 'MessageBuildError', permanent: true });
  });
});
