/**
 * The Content-Security-Policy the email preview carries in its own <meta>: nothing remote loads and
 * nothing runs until the person asks for remote content; even then, only images, styles and fonts.
 * The iframe's `sandbox=""` (no allow-scripts) is the second wall: a script never runs either way.
 */
export function previewPolicy(allowRemote: boolean): string {
  const remote = allowRemote ? ' https: http:' : '';
  return [
    `default-src 'none'`,
    `img-src data: cid:${remote}`,
    `style-src 'unsafe-inline'${remote}`,
    `font-src data:${remote}`,
    `script-src 'none'`,
    `form-action 'none'`,
  ].join('; ');
}

/**
 * The email's HTML as an iframe srcdoc: parsed inertly (DOMParser runs no script and loads nothing),
 * its own <meta http-equiv> (a refresh could navigate the frame) and <base> removed, then the
 * policy first in <head> so it is in force before anything else is parsed, and links set to open a
 * new window, which the sandbox refuses, so a click cannot navigate the preview either.
 */
export function previewDocument(html: string, allowRemote: boolean, parser = new DOMParser()): string {
  const document = parser.parseFromString(html, 'text/html');
  for (const element of Array.from(document.querySelectorAll('meta[http-equiv], base, script, iframe, object, embed'))) element.remove();
  const head = document.head;
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = previewPolicy(allowRemote);
  const base = document.createElement('base');
  base.target = '_blank';
  head.prepend(meta, base);
  return `<!doctype html>${document.documentElement.outerHTML}`;
}

/** True when the HTML would load something remote (an http(s) URL in src, href of a stylesheet, srcset, url()). */
export function hasRemoteContent(html: string): boolean {
  return /(?:src|srcset|background|href)\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) || /url\(\s*["']?\s*(?:https?:)?\/\//i.test(html);
}
