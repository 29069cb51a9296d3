import { compileTemplate, renderMergeTags, renderTemplate, type MergeValues } from './merge-tags';

const values = (contact: MergeValues['contact'], fallbacks: MergeValues['fallbacks'] = {}): MergeValues => ({
  contact,
  fallbacks,
  unsubscribeUrl: 'https://api.example/unsubscribe/abc?x=1&y=2',
});

describe('merge tags', () => {
  it('fills a contact field, or the tag fallback when the contact has none', () => {
    expect(renderMergeTags('Hi {{{contact.first_name|there}}}!', values({ first_name: 'Ada' }), false)).toBe('Hi Ada!');
    expect(renderMergeTags('Hi {{{contact.first_name|there}}}!', values({ first_name: null }), false)).toBe('Hi there!');
    expect(renderMergeTags('Hi {{{ contact.first_name | there }}}!', values({ first_name: '' }), false)).toBe('Hi there!');
    expect(renderMergeTags('Hi {{{contact.first_name}}}!', values({}), false)).toBe('Hi !');
  });

  it("uses a custom property's own fallback when neither the contact nor the tag gives one", () => {
    const v = values({ plan: null, visits: 3 }, { plan: 'free', visits: 0 });
    expect(renderMergeTags('{{{contact.plan}}} / {{{contact.visits}}}', v, false)).toBe('free / 3');
    expect(renderMergeTags('{{{contact.plan|none}}}', v, false)).toBe('none');
  });

  it('escapes values in the html part, not in the text part', () => {
    const v = values({ first_name: '<script>"Bo" & co</script>' });
    expect(renderMergeTags('<p>{{{contact.first_name}}}</p>', v, true)).toBe('<p>&lt;script&gt;&quot;Bo&quot; &amp; co&lt;/script&gt;</p>');
    expect(renderMergeTags('{{{contact.first_name}}}', v, false)).toBe('<script>"Bo" & co</script>');
  });

  it('fills both unsubscribe tags, escaped inside an href', () => {
    const html = '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">a</a><a href="{{{HERALD_UNSUBSCRIBE_URL}}}">b</a>';
    expect(renderMergeTags(html, values({}), true)).toBe(
      '<a href="https://api.example/unsubscribe/abc?x=1&amp;y=2">a</a><a href="https://api.example/unsubscribe/abc?x=1&amp;y=2">b</a>',
    );
    expect(renderMergeTags('{{{RESEND_UNSUBSCRIBE_URL}}}', values({}), false)).toBe('https://api.example/unsubscribe/abc?x=1&y=2');
  });

  it("reads Resend's older audience tags", () => {
    expect(renderMergeTags('{{{FIRST_NAME|friend}}} {{{EMAIL}}}', values({ email: 'a@b.c' }), false)).toBe('friend a@b.c');
  });

  it('leaves unknown tags and double braces as written', () => {
    const source = '{{{order.total}}} {{contact.first_name}} {{{contact.}}}';
    expect(renderMergeTags(source, values({ first_name: 'Ada' }), true)).toBe(source);
  });

  it('lists the fields a template reads, and renders a template without tags as is', () => {
    const t = compileTemplate('{{{contact.first_name}}} {{{contact.company|ACME}}} {{{RESEND_UNSUBSCRIBE_URL}}}');
    expect([...t.fields].sort()).toEqual(['company', 'first_name']);
    const plain = compileTemplate('no tags here');
    expect(renderTemplate(plain, values({}), true)).toBe('no tags here');
  });
});
