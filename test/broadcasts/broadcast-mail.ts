import type { ParsedMail } from 'mailparser';

/** What the checks below read of a message: mailparser's ParsedMail, or readMail's quicker view. */
export type MailView = Pick<ParsedMail, 'subject' | 'text' | 'html' | 'headerLines'>;

/**
 * A message's headers, subject and text and html parts, read straight from its bytes: the shape
 * Herald writes (one multipart level or none; 7bit, quoted-printable or base64 UTF-8 parts).
 * mailparser's stream pipeline took 10–25 ms a message on a busy machine, minutes for 9,000;
 * this takes a fraction of a millisecond. Anything it cannot read shows as a missing part or an
 * undecoded subject, so a check fails rather than passes.
 */
export function readMail(raw: Buffer): MailView {
  const view: { subject?: string; text?: string; html: string | false; headerLines: { key: string; line: string }[] } = {
    html: false,
    headerLines: [],
  };
  const { headers, body } = splitEntity(raw.toString('latin1'));
  view.headerLines = headers;
  view.subject = headers
    .find((h) => h.key === 'subject')
    ?.line.replace(/^Subject:\s*/i, '')
    .replace(/\r\n(?=[ \t])/g, '');
  const visit = (entity: { headers: { key: string; line: string }[]; body: string }) => {
    const type = entity.headers.find((h) => h.key === 'content-type')?.line ?? 'Content-Type: text/plain';
    const boundary = /boundary="?([^";\s]+)"?/i.exec(type)?.[1];
    if (/multipart\//i.test(type) && boundary) {
      const parts = entity.body.split(`--${boundary}`).slice(1);
      // The line break before each delimiter is the delimiter's (RFC 2046 §5.1.1), not the part's.
      for (const part of parts) if (!part.startsWith('--')) visit(splitEntity(part.replace(/^\r\n/, '').replace(/\r\n$/, '')));
      return;
    }
    const encoding = entity.headers
      .find((h) => h.key === 'content-transfer-encoding')
      ?.line.split(':')[1]
      ?.trim()
      .toLowerCase();
    const decoded = decodeBody(entity.body, encoding);
    if (/text\/html/i.test(type)) view.html = decoded;
    else if (/text\/plain/i.test(type)) view.text = decoded;
  };
  visit({ headers, body });
  return view;
}

function splitEntity(entity: string): { headers: { key: string; line: string }[]; body: string } {
  const end = entity.indexOf('\r\n\r\n');
  const block = end < 0 ? entity : entity.slice(0, end);
  const body = end < 0 ? '' : entity.slice(end + 4);
  const headers = block
    .split(/\r\n(?![ \t])/)
    .filter((line) => line.includes(':'))
    .map((line) => ({ key: line.slice(0, line.indexOf(':')).trim().toLowerCase(), line: Buffer.from(line, 'latin1').toString('utf8') }));
  return { headers, body };
}

function decodeBody(body: string, encoding: string | undefined): string {
  const bytes =
    encoding === 'base64'
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
      : encoding === 'quoted-printable'
        ? Buffer.from(
            body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          )
        : Buffer.from(body, 'latin1');
  return bytes.toString('utf8');
}

/** The targets of List-Unsubscribe: `[https link, mailto]`. */
export function listUnsubscribe(parsed: MailView): string[] {
  const raw = parsed.headerLines
    .find((h) => h.key === 'list-unsubscribe')!
    .line.replace(/^List-Unsubscribe:\s*/i, '')
    .replace(/\r?\n\s+/g, ' ');
  return [...raw.matchAll(/<([^>]+)>/g)].map((m) => m[1]!);
}

/** What one contact's broadcast email must say: its own merge values, or the fallbacks. */
export interface ExpectedMail {
  subject: string;
  /** Substrings of the text part. */
  text: string[];
  /** Substrings of the HTML part (HTML-escaped already). */
  html: string[];
}

/** Where a broadcast's unsubscribe links must point. */
export interface UnsubscribeShape {
  /** The https link: `<PUBLIC_API_URL>/unsubscribe/<token>`. */
  link: RegExp;
  /** The mailto: target, on the sending domain's Return-Path host. */
  mailto: RegExp;
}

export const unsubscribeShape = (apiUrl: string, sendingDomain: string): UnsubscribeShape => ({
  link: new RegExp(`^${apiUrl.replace(/\./g, '\\.')}/unsubscribe/[A-Za-z0-9_-]{44}$`),
  mailto: new RegExp(`^mailto:u-[0-9a-f]{32}-[a-z2-7]{16}@[a-z0-9.-]+\\.${sendingDomain.replace(/\./g, '\\.')}\\?subject=unsubscribe$`),
});

/**
 * What is wrong with one delivered broadcast email (nothing: an empty list): its merge values,
 * its one-click List-Unsubscribe headers, and the same link in its HTML and text.
 */
export function mailProblems(parsed: MailView, expected: ExpectedMail, shape: UnsubscribeShape): string[] {
  const problems: string[] = [];
  if (parsed.subject !== expected.subject) problems.push(`subject ${JSON.stringify(parsed.subject)}`);
  for (const part of expected.text) if (!parsed.text?.includes(part)) problems.push(`text lacks ${JSON.stringify(part)}`);
  const html = typeof parsed.html === 'string' ? parsed.html : '';
  for (const part of expected.html) if (!html.includes(part)) problems.push(`html lacks ${JSON.stringify(part)}`);
  const post = parsed.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line;
  if (post !== 'List-Unsubscribe-Post: List-Unsubscribe=One-Click') problems.push(`List-Unsubscribe-Post ${JSON.stringify(post)}`);
  if (!parsed.headerLines.some((h) => h.key === 'list-unsubscribe')) return [...problems, 'no List-Unsubscribe'];
  const [link, mailto, ...more] = listUnsubscribe(parsed);
  if (!link || !shape.link.test(link)) problems.push(`List-Unsubscribe link ${JSON.stringify(link)}`);
  if (!mailto || !shape.mailto.test(mailto)) problems.push(`List-Unsubscribe mailto ${JSON.stringify(mailto)}`);
  if (more.length) problems.push(`List-Unsubscribe has more targets: ${JSON.stringify(more)}`);
  if (link && !html.includes(`href="${link}"`)) problems.push('the html does not link to its List-Unsubscribe link');
  if (link && !parsed.text?.includes(link)) problems.push('the text does not show its List-Unsubscribe link');
  return problems;
}

/** The header names a passing DKIM signature covers (mailauth's result), lower-cased; null when none passed. */
export function dkimCoveredHeaders(auth: any): string[] | null {
  const passing = (auth.dkim.results as any[]).find((r) => r.status.result === 'pass');
  if (!passing) return null;
  return (passing.signingHeaders.keys as string)
    .toLowerCase()
    .split(':')
    .map((k) => k.trim());
}

/** What mailauth made of one message: the headers its passing DKIM signature covers, and DMARC's result. */
export interface AuthVerdict {
  address: string;
  covered: string[] | null;
  dmarc: string;
}

/**
 * `n` of `messages` picked at random (one recipient each), through `authenticate` (mailauth
 * against the test's DNS), eight at a time: each waits on a few DNS answers.
 */
export async function authenticateSample<M extends { recipients: string[] }>(
  messages: readonly M[],
  n: number,
  authenticate: (message: M) => Promise<any>,
): Promise<AuthVerdict[]> {
  const sample = randomSample(messages, n);
  const verdicts: AuthVerdict[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < sample.length) {
        const message = sample[next++]!;
        const auth = await authenticate(message);
        verdicts.push({ address: message.recipients[0]!, covered: dkimCoveredHeaders(auth), dmarc: auth.dmarc.status.result });
      }
    }),
  );
  return verdicts;
}

/** `n` of `items` picked at random (a partial Fisher-Yates shuffle). */
export function randomSample<T>(items: readonly T[], n: number): T[] {
  const pool = [...items];
  for (let k = 0; k < n && k < pool.length; k++) {
    const j = k + Math.floor(Math.random() * (pool.length - k));
    [pool[k], pool[j]] = [pool[j]!, pool[k]!];
  }
  return pool.slice(0, n);
}

/** Each recipient's copies at a sink, by their Message-ID: a copy too many names itself (one email sent twice, or two emails). */
export function copiesAtSink(messages: readonly { recipients: string[]; raw: Buffer }[]): Map<string, string[]> {
  const copies = new Map<string, string[]>();
  for (const m of messages) {
    const messageId = /^Message-ID:\s*(\S+)/im.exec(m.raw.toString('latin1'))?.[1] ?? '?';
    for (const r of m.recipients) copies.set(r, [...(copies.get(r) ?? []), messageId]);
  }
  return copies;
}
