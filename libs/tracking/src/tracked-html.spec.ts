import { listUnsubscribeUrls, TrackedHtml } from './tracked-html';

const click = (index: number, url: string) => `https://links.acme.test/t/c/${index}?u=${encodeURIComponent(url)}`;
const PIXEL = 'https://links.acme.test/t/o/px';

describe('TrackedHtml', () => {
  it('rewrites every http(s) link, in order, and keeps the rest of the html byte for byte', () => {
    const html = `<p>Hi <a href="https://a.example/x">A</a>, <A HREF='http://b.example/?q=1&amp;r=2' class="btn">B</A> <a class=x href=https://c.example>C</a></p>`;
    const tracked = TrackedHtml.parse(html);
    expect(tracked.links.map((l) => l.url)).toEqual(['https://a.example/x', 'http://b.example/?q=1&r=2', 'https://c.example/']);
    expect(tracked.render(click, null)).toBe(
      `<p>Hi <a href="${click(0, 'https://a.example/x')}">A</a>, <A HREF='${click(1, 'http://b.example/?q=1&r=2').replace(/&/g, '&amp;')}' class="btn">B</A> <a class=x href=${click(2, 'https://c.example/')}>C</a></p>`,
    );
  });

  it('renders the html unchanged with no click URLs and no pixel', () => {
    const html = `<a href="https://a.example/?a=1&amp;b=2">x</a><area href="https://b.example" />`;
    expect(TrackedHtml.parse(html).render(null, null)).toBe(html);
  });

  it('leaves mailto:, tel:, fragments, relative links and other schemes alone', () => {
    const html = `<a href="mailto:a@b.example">m</a><a href="tel:+1">t</a><a href="#top">f</a><a href="/x">r</a><a href="javascript:alert(1)">j</a><a href="ftp://f.example">f</a><a name="n">n</a>`;
    expect(TrackedHtml.parse(html).links).toEqual([]);
  });

  it('leaves links marked data-herald-no-track alone', () => {
    const tracked = TrackedHtml.parse(`<a data-herald-no-track href="https://a.example">a</a><a href="https://b.example">b</a>`);
    expect(tracked.links.map((l) => l.url)).toEqual(['https://b.example/']);
  });

  it('leaves unsubscribe links alone: List-Unsubscribe targets and links marked as such', () => {
    const unsubscribe = listUnsubscribeUrls('<mailto:u@acme.test?subject=unsubscribe>, <https://acme.test/unsub?u=1&t=2>');
    expect([...unsubscribe]).toEqual(['https://acme.test/unsub?u=1&t=2']);
    const html = [
      `<a href="https://acme.test/unsub?u=1&amp;t=2">unsubscribe</a>`,
      `<a rel="nofollow unsubscribe" href="https://acme.test/prefs">preferences</a>`,
      `<a data-herald-unsubscribe href="https://acme.test/out">out</a>`,
      `<a href="https://acme.test/shop">shop</a>`,
    ].join('');
    expect(TrackedHtml.parse(html, unsubscribe).links.map((l) => l.url)).toEqual(['https://acme.test/shop']);
  });

  it('skips links in comments, <script> and <style>, and tags that only look like links', () => {
    const html = `<!-- <a href="https://c.example">c</a> --><style>a[href="https://s.example"]{}</style><script>x='<a href="https://j.example">'</script><abbr href="https://n.example">n</abbr><a href="https://y.example">y</a>`;
    expect(TrackedHtml.parse(html).links.map((l) => l.url)).toEqual(['https://y.example/']);
  });

  it('puts the pixel before </body>, or at the end without one', () => {
    expect(TrackedHtml.parse('<html><body><p>x</p></body></html>').render(null, PIXEL)).toBe(
      `<html><body><p>x</p><img src="${PIXEL}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0"></body></html>`,
    );
    expect(TrackedHtml.parse('<p>x</p>').render(null, PIXEL)).toMatch(/^<p>x<\/p><img src="https:\/\/links\.acme\.test\/t\/o\/px"/);
  });

  it('gives a link with entities and odd spacing its real target, percent-encoded for a Location header', () => {
    const tracked = TrackedHtml.parse(`<a href = " https://a.example/caf&#233;?x=&quot;1&quot; ">a</a>`);
    expect(tracked.links.map((l) => l.url)).toEqual(['https://a.example/caf%C3%A9?x=%221%22']);
  });

  it('keeps a link as written when its click URL is null (too long to track)', () => {
    const html = `<a href="https://a.example/1">1</a><a href="https://a.example/2">2</a>`;
    expect(TrackedHtml.parse(html).render((i, url) => (i === 0 ? null : click(i, url)), null)).toBe(
      `<a href="https://a.example/1">1</a><a href="${click(1, 'https://a.example/2')}">2</a>`,
    );
  });
});
