import { simpleParser } from 'mailparser';
import { mimeHtml } from './mime-html';

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');
const HEAD = ['From: a@acme.test', 'To: b@inbox.test', 'Subject: Hi', 'List-Unsubscribe: <https://acme.test/u>', 'MIME-Version: 1.0'];

describe('mimeHtml (a relayed message’s html part)', () => {
  it('finds the html of a multipart/alternative, decodes it, and replaces only it', async () => {
    const message = crlf([
      ...HEAD,
      'Content-Type: multipart/alternative; boundary="b1"',
      '',
      'preamble',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Plain https://shop.example/',
      '--b1',
      'Content-Type: text/html; charset="UTF-8"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('<p>Café <a href="https://shop.example/">shop</a></p>').toString('base64'),
      '--b1--',
      '',
    ]);
    const found = mimeHtml(message)!;
    expect(found.html).toBe('<p>Café <a href="https://shop.example/">shop</a></p>');
    expect(found.headers['list-unsubscribe']).toBe('<https://acme.test/u>');
    const replaced = found.replace('<p>Café <a href="https://links.acme.test/t/c/x">shop</a></p>');
    const parsed = await simpleParser(replaced);
    expect(parsed.html).toBe('<p>Café <a href="https://links.acme.test/t/c/x">shop</a></p>');
    expect(parsed.text).toBe('Plain https://shop.example/');
    expect(parsed.subject).toBe('Hi');
    const text = replaced.toString('latin1');
    expect(text.startsWith(message.toString('latin1').slice(0, message.indexOf('--b1\r\nContent-Type: text/html')))).toBe(true);
    expect(text.endsWith('\r\n--b1--\r\n')).toBe(true);
  });

  it('finds a single-part html message and one nested in multipart/mixed, skipping an html attachment', async () => {
    const single = crlf([
      ...HEAD,
      'Content-Type: text/html',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<a href=3D"https://a.example/">a</a>',
      '',
    ]);
    const one = mimeHtml(single)!;
    expect(one.html).toBe('<a href="https://a.example/">a</a>\r\n');
    expect((await simpleParser(one.replace('<b>new</b>'))).html).toBe('<b>new</b>');

    const nested = crlf([
      ...HEAD,
      'Content-Type: multipart/mixed; boundary=outer',
      '',
      '--outer',
      'Content-Type: text/html; name=page.html',
      'Content-Disposition: attachment; filename=page.html',
      '',
      '<p>attached</p>',
      '--outer',
      'Content-Type: multipart/alternative; boundary=inner',
      '',
      '--inner',
      'Content-Type: text/html; charset=iso-8859-1',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<p>na=EFve</p>',
      '--inner--',
      '--outer--',
      '',
    ]);
    const found = mimeHtml(nested)!;
    expect(found.html).toBe('<p>naïve</p>');
    const parsed = await simpleParser(found.replace('<p>tracked naïve</p>'));
    expect(parsed.html).toBe('<p>tracked naïve</p>');
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['page.html']);
  });

  it('gives up (the message goes untracked) without html or with a charset it does not re-encode', () => {
    expect(mimeHtml(crlf([...HEAD, 'Content-Type: text/plain', '', 'hi', '']))).toBeNull();
    expect(mimeHtml(crlf([...HEAD, 'Content-Type: text/html; charset=shift_jis', '', '<p>x</p>', '']))).toBeNull();
  });
});
