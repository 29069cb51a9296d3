import { httpHost, scanMessage } from './message-scan';
import { headerBlock } from './reviewed-email';

describe('scanMessage', () => {
  it('finds links (with their text and no-track mark) and images with their attributes, however quoted, skipping comments', () => {
    const scan = scanMessage(
      `<a class=x href='https://Acme.com/a?x=1&amp;y=2'>A</a> <A HREF=http://192.0.2.1/ data-herald-no-track><b>B</b>&nbsp;b</A> <a href="mailto:hi@acme.com">C</a>
       <!-- <a href="https://hidden.example">old</a> --> <a name="top">no href</a>
       <img src="https://acme.com/a.png" alt="A logo"><img src="/b.png" ALT><img src="c.png" alt=""><img src="d.png">`,
      null,
    );
    expect(scan.links).toEqual([
      { url: 'https://Acme.com/a?x=1&y=2', host: 'acme.com', text: 'A', noTrack: false },
      { url: 'http://192.0.2.1/', host: '192.0.2.1', text: 'B b', noTrack: true },
      { url: 'mailto:hi@acme.com', host: null, text: 'C', noTrack: false },
    ]);
    expect(scan.images).toEqual([
      { src: 'https://acme.com/a.png', alt: 'A logo' },
      { src: '/b.png', alt: '' },
      { src: 'c.png', alt: '' },
      { src: 'd.png', alt: null },
    ]);
  });

  it('counts the text a reader sees: no styles, scripts, head or tags, entities decoded, whitespace collapsed', () => {
    const scan = scanMessage(
      '<html><head><title>T</title><style>p{color:red}</style></head><body><p>Hi&nbsp;&amp;  bye</p>\n<script>x()</script>\u200b</body></html>',
      null,
    );
    expect(scan.visibleTextLength).toBe('Hi & bye'.length);
    expect(scan.htmlBytes).toBeGreaterThan(0);
  });

  it('reads the URLs of the text part when there is no HTML', () => {
    const scan = scanMessage(null, 'See https://bit.ly/x and (https://acme.com/y).');
    expect(scan.links.map((l) => l.host)).toEqual(['bit.ly', 'acme.com']);
    expect(scan).toMatchObject({ images: [], visibleTextLength: null, htmlBytes: 0 });
  });

  it('counts HTML bytes as UTF-8', () => {
    expect(scanMessage('é', null).htmlBytes).toBe(2);
  });
});

describe('httpHost', () => {
  it('lowercases the host of http(s) URLs, strips IPv6 brackets, and ignores other schemes', () => {
    expect(httpHost('HTTPS://WWW.Acme.COM./x')).toBe('www.acme.com');
    expect(httpHost('http://[2001:db8::1]:8080/')).toBe('2001:db8::1');
    expect(httpHost('ftp://acme.com')).toBeNull();
    expect(httpHost('https://')).toBeNull();
  });
});

describe('headerBlock', () => {
  it('reads the unfolded header block of a relayed message, names lowercased, the first of a repeated name kept', () => {
    const mime = Buffer.from(
      'From: a@acme.com\r\nList-Unsubscribe: <https://acme.com/u>,\r\n <mailto:u@acme.com>\r\nReceived: one\r\nReceived: two\r\n\r\nList-Id: not a header\r\n',
    );
    expect(headerBlock(mime)).toEqual({ from: 'a@acme.com', 'list-unsubscribe': '<https://acme.com/u>, <mailto:u@acme.com>', received: 'one' });
  });
});
