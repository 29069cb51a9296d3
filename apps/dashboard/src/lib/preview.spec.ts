import { hasRemoteContent, previewPolicy } from './preview';

describe('previewPolicy', () => {
  it('blocks everything remote and every script until remote content is asked for', () => {
    const policy = previewPolicy(false);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'none'");
    expect(policy).toContain('img-src data: cid:;');
    expect(policy).not.toMatch(/https?:/);
  });

  it('allows remote images, styles and fonts (never scripts) once asked', () => {
    const policy = previewPolicy(true);
    expect(policy).toContain('img-src data: cid: https: http:');
    expect(policy).toContain("script-src 'none'");
    expect(policy).toContain("default-src 'none'");
  });
});

describe('hasRemoteContent', () => {
  it.each([
    '<img src="https://tracker.example/p.gif">',
    "<img src='//cdn.example/a.png'>",
    '<link rel="stylesheet" href="http://example.com/a.css">',
    '<td background="https://example.com/bg.png">',
    '<div style="background: url(https://example.com/x.png)">',
  ])('sees remote content in %s', (html) => expect(hasRemoteContent(html)).toBe(true));

  it.each(['<p>Hello</p>', '<img src="data:image/png;base64,AAAA">', '<img src="cid:logo">'])('sees none in %s', (html) =>
    expect(hasRemoteContent(html)).toBe(false),
  );
});
