import { renderEmailDocument } from './email-document.render';
import { EmailDocumentError } from './email-document.validation';

const text = (value: string, marks: unknown[] = []) => ({ type: 'text', text: value, ...(marks.length ? { marks } : {}) });
const paragraph = (...content: unknown[]) => ({ type: 'paragraph', content });
/** The editor's shape: its theme node, then one container holding the blocks and a trailing empty paragraph. */
const doc = (...blocks: unknown[]) => ({
  type: 'doc',
  content: [
    { type: 'globalContent', attrs: { data: {} } },
    { type: 'container', content: [...blocks, { type: 'paragraph' }] },
  ],
});
const render = (...blocks: unknown[]) => renderEmailDocument(doc(...blocks));
const bodyOf = (html: string) => html.slice(html.indexOf('class="herald-card"'), html.lastIndexOf('</td></tr></table>\n</td>'));

describe('renderEmailDocument', () => {
  it('renders a complete, table-based document with inline styles and a plain-text part', () => {
    const { html, text: plain } = render(
      { type: 'heading', attrs: { level: 1 }, content: [text('Spring sale')] },
      paragraph(text('Everything is 20% off.')),
    );
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('<table role="presentation"');
    expect(html).toMatch(/<h1 style="margin:0 0 16px;font-size:28px;line-height:36px;font-weight:700">Spring sale<\/h1>/);
    expect(html).toContain('<p style="margin:0 0 16px">Everything is 20% off.</p>');
    expect(html).not.toMatch(/class="(?!herald-)/);
    expect(plain).toBe('Spring sale\n\nEverything is 20% off.\n');
  });

  it('drops the empty paragraph the editor keeps at the end, keeps an empty one between blocks as a blank line', () => {
    const { html } = render(paragraph(text('a')), { type: 'paragraph' }, paragraph(text('b')));
    expect(bodyOf(html).match(/<p /g)).toHaveLength(3);
    expect(html).toContain('<p style="margin:0 0 16px">&nbsp;</p>');
  });

  it('renders marks and alignment', () => {
    const { html, text: plain } = render({
      type: 'paragraph',
      attrs: { alignment: 'center' },
      content: [
        text('bold', [{ type: 'bold' }]),
        text(' and '),
        text('site', [{ type: 'italic' }, { type: 'link', attrs: { href: 'https://example.com/a?b=1&c=2' } }]),
      ],
    });
    expect(html).toContain(
      '<p style="margin:0 0 16px;text-align:center"><strong>bold</strong> and <a href="https://example.com/a?b=1&amp;c=2" target="_blank" style="color:#2563eb;text-decoration:underline"><em>site</em></a></p>',
    );
    expect(plain).toBe('bold and site (https://example.com/a?b=1&c=2)\n');
  });

  it('renders a button as a bulletproof link in a table cell with its alignment', () => {
    const { html, text: plain } = render({
      type: 'button',
      attrs: { href: 'https://shop.example/sale', alignment: 'center' },
      content: [text('Shop now')],
    });
    expect(html).toMatch(
      /<td align="center" style="padding:0 0 16px"><a href="https:\/\/shop\.example\/sale" target="_blank" style="display:inline-block;background-color:#18181b;color:#ffffff;[^"]*">Shop now<\/a><\/td>/,
    );
    expect(plain).toBe('Shop now: https://shop.example/sale\n');
  });

  it('renders an image with its size, alt text and link', () => {
    const { html, text: plain } = render({
      type: 'image',
      attrs: {
        src: 'https://herald.example/images/abc',
        alt: 'A "red" shoe',
        width: '300',
        height: 'auto',
        alignment: 'center',
        href: 'https://shop.example/shoe',
      },
    });
    expect(html).toContain(
      '<a href="https://shop.example/shoe" target="_blank"><img src="https://herald.example/images/abc" alt="A &quot;red&quot; shoe" width="300" style="display:inline-block;border:0;outline:none;max-width:100%;height:auto;width:300px"></a>',
    );
    expect(plain).toBe('A "red" shoe: https://shop.example/shoe\n');
  });

  it('renders columns as table cells that stack on narrow screens', () => {
    const column = (words: string) => ({ type: 'columnsColumn', content: [paragraph(text(words)), { type: 'paragraph' }] });
    const { html, text: plain } = render({ type: 'twoColumns', content: [column('left'), column('right')] });
    expect(html.match(/<td class="herald-column" width="50%" valign="top"/g)).toHaveLength(2);
    expect(html).toContain('@media only screen and (max-width:620px){.herald-column{display:block!important;width:100%!important');
    expect(plain).toBe('left\n\nright\n');
  });

  it('renders a divider, a spacer of its height and a footer with the unsubscribe link', () => {
    const { html, text: plain } = render(
      paragraph(text('a')),
      { type: 'horizontalRule' },
      { type: 'spacer', attrs: { height: 40 } },
      { type: 'footer', content: [text('Acme, 1 Main St')] },
    );
    expect(html).toContain('border-top:1px solid #e4e4e7;font-size:1px;line-height:1px;height:1px');
    expect(html).toContain('style="height:40px;font-size:1px;line-height:40px">&nbsp;</td>');
    expect(html).toContain(
      'Acme, 1 Main St<br><a href="{{{RESEND_UNSUBSCRIBE_URL}}}" target="_blank" style="color:#71717a;text-decoration:underline">Unsubscribe</a>',
    );
    expect(plain).toBe('a\n\n----------\n\nAcme, 1 Main St\nUnsubscribe: {{{RESEND_UNSUBSCRIBE_URL}}}\n');
  });

  it('renders lists, quotes and code', () => {
    const item = (words: string) => ({ type: 'listItem', content: [paragraph(text(words))] });
    const { html, text: plain } = render(
      { type: 'bulletList', content: [item('one'), item('two')] },
      { type: 'orderedList', content: [item('first')] },
      { type: 'blockquote', content: [paragraph(text('quoted'))] },
      { type: 'codeBlock', content: [text('a < b')] },
    );
    expect(html).toContain(
      '<ul style="margin:0 0 16px;padding:0 0 0 24px"><li style="margin:0 0 4px">one</li><li style="margin:0 0 4px">two</li></ul>',
    );
    expect(html).toContain('<ol style="margin:0 0 16px;padding:0 0 0 24px"><li style="margin:0 0 4px">first</li></ol>');
    expect(html).toContain('a &lt; b</pre>');
    expect(plain).toBe('- one\n- two\n\n1. first\n\n> quoted\n\na < b\n');
  });

  it('escapes what people type', () => {
    const { html, text: plain } = render(paragraph(text('<script>alert("x")</script> & \'co\'')));
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;');
    expect(html).not.toContain('<script>');
    expect(plain).toBe('<script>alert("x")</script> & \'co\'\n');
  });

  describe('merge tags', () => {
    it('keeps merge-tag chips and typed merge tags intact in both parts', () => {
      const { html, text: plain } = render(
        {
          type: 'heading',
          attrs: { level: 2 },
          content: [text('Hi '), { type: 'mergeTag', attrs: { key: 'contact.first_name', fallback: 'there' } }, text('!')],
        },
        paragraph(text('Your plan: {{{contact.plan|free & basic}}} <b>')),
        paragraph({ type: 'mergeTag', attrs: { key: 'contact.company', fallback: null }, marks: [{ type: 'bold' }] }),
      );
      expect(html).toContain('Hi {{{contact.first_name|there}}}!</h2>');
      expect(html).toContain('Your plan: {{{contact.plan|free & basic}}} &lt;b&gt;');
      expect(html).toContain('<strong>{{{contact.company}}}</strong>');
      expect(plain).toBe('Hi {{{contact.first_name|there}}}!\n\nYour plan: {{{contact.plan|free & basic}}} <b>\n\n{{{contact.company}}}\n');
    });

    it('keeps a merge tag as a link target', () => {
      const { html, text: plain } = render(paragraph(text('Leave', [{ type: 'link', attrs: { href: '{{{RESEND_UNSUBSCRIBE_URL}}}' } }])));
      expect(html).toContain('<a href="{{{RESEND_UNSUBSCRIBE_URL}}}"');
      expect(plain).toBe('Leave ({{{RESEND_UNSUBSCRIBE_URL}}})\n');
    });

    it('does not treat a brace run that is not a merge tag as one', () => {
      const { html } = render(paragraph(text('{{{<img src=x onerror=alert(1)>}}}')));
      expect(html).toContain('{{{&lt;img src=x onerror=alert(1)&gt;}}}');
    });

    it('uppercases text but never the merge tag names', () => {
      const { text: plain } = render(
        paragraph(text('hey ', [{ type: 'uppercase' }]), { type: 'mergeTag', attrs: { key: 'contact.first_name' }, marks: [{ type: 'uppercase' }] }),
      );
      expect(plain).toBe('HEY {{{contact.first_name}}}\n');
    });
  });

  describe('malformed documents', () => {
    const rejects = (document: unknown, path: string, words: RegExp) => {
      let thrown: unknown;
      try {
        renderEmailDocument(document);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EmailDocumentError);
      expect((thrown as EmailDocumentError).path).toBe(path);
      expect((thrown as EmailDocumentError).code).toBe('invalid_document');
      expect((thrown as EmailDocumentError).message).toMatch(words);
      expect((thrown as EmailDocumentError).message.startsWith(path)).toBe(true);
    };

    it('names the path of what is wrong', () => {
      rejects(null, 'document', /must be an object/);
      rejects('<p>hi</p>', 'document', /must be an object/);
      rejects({ type: 'page', content: [] }, 'document.type', /must be "doc"/);
      rejects({ type: 'doc', content: {} }, 'document.content', /must be an array/);
      rejects(doc({ type: 'table', content: [] }), 'document.content[1].content[0].type', /"table" is not a block/);
      rejects(doc(paragraph({ type: 'text', text: '' })), 'document.content[1].content[0].content[0].text', /non-empty string/);
      rejects(doc(paragraph({ type: 'image' })), 'document.content[1].content[0].content[0].type', /not inline content/);
      rejects(doc(paragraph(text('x', [{ type: 'highlight' }]))), 'document.content[1].content[0].content[0].marks[0].type', /not a mark/);
      rejects(doc({ type: 'heading', attrs: { level: 9 } }), 'document.content[1].content[0].attrs.level', /1 to 6/);
      rejects(doc({ type: 'paragraph', attrs: { alignment: 'middle' } }), 'document.content[1].content[0].attrs.alignment', /left, center/);
      rejects(doc({ type: 'spacer', attrs: { height: 5000 } }), 'document.content[1].content[0].attrs.height', /1 to 200/);
      rejects(
        doc({ type: 'twoColumns', content: [{ type: 'columnsColumn', content: [] }] }),
        'document.content[1].content[0].content',
        /2 columns, not 1/,
      );
    });

    it('rejects unsafe and relative links and image sources', () => {
      rejects(
        doc(paragraph(text('x', [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }]))),
        'document.content[1].content[0].content[0].marks[0].attrs.href',
        /http\(s\) or mailto/,
      );
      rejects(doc({ type: 'button', attrs: { href: '/relative' }, content: [text('Go')] }), 'document.content[1].content[0].attrs.href', /http\(s\)/);
      rejects(
        doc({ type: 'button', attrs: { href: 'https://a.example/"><script>' }, content: [text('Go')] }),
        'document.content[1].content[0].attrs.href',
        /http\(s\)/,
      );
      rejects(
        doc({ type: 'image', attrs: { src: 'data:image/png;base64,AAAA' } }),
        'document.content[1].content[0].attrs.src',
        /absolute http\(s\) URL/,
      );
    });

    it('rejects merge tags that would break out of the tag', () => {
      const tag = (attrs: unknown) => doc(paragraph({ type: 'mergeTag', attrs }));
      rejects(tag({ key: 'contact first' }), 'document.content[1].content[0].content[0].attrs.key', /merge tag name/);
      rejects(tag({ key: 'contact.name', fallback: '}}}<script>' }), 'document.content[1].content[0].content[0].attrs.fallback', /without braces/);
    });

    it('rejects documents too large or too deep', () => {
      rejects(doc(paragraph(text('x'.repeat(600 * 1024)))), 'document', /bytes of JSON; the most is 524288/);
      let deep: unknown = paragraph(text('x'));
      for (let i = 0; i < 45; i++) deep = { type: 'blockquote', content: [deep] };
      rejects({ type: 'doc', content: [deep] }, `document${'.content[0]'.repeat(41)}`, /deeper than 40 levels/);
      const cyclic: Record<string, unknown> = { type: 'doc' };
      cyclic['content'] = [cyclic];
      rejects(cyclic, 'document', /not JSON/);
    });
  });
});
