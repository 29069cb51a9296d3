/**
 * The html and text bodies of a MIME message, as GET /emails shows them for an email relayed over
 * SMTP (the relay stores the message as sent and never parses its body). Null when the message has
 * none of that kind, or cannot be parsed.
 */
export async function mimeBodies(mime: Buffer): Promise<{ html: string | null; text: string | null }> {
  try {
    // Loaded on first use: mailparser is a large module tree that only this path needs, and every
    // process and test suite that imports the email record would otherwise evaluate it at start.
    const { simpleParser } = await import('mailparser');
    // Bodies only: links, cid: images and derived texts are not wanted.
    const parsed = await simpleParser(mime, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
    return { html: typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null, text: parsed.text ?? null };
  } catch {
    return { html: null, text: null };
  }
}
