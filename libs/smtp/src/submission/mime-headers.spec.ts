import { fieldValue, overlongHeaderLine, rewriteMessage, rfc5322Date, splitMessage } from './mime-headers';

describe('mime-headers', () => {
  it('splits fields with their folds and line endings; rewriting keeps every other byte', () => {
    const message = Buffer.from('Subject: a\r\n b\r\nBcc: x@y.test\r\nTo: t@y.test\r\n\r\nbody\r\n\r\nmore Bcc: no\r\n', 'latin1');
    const split = splitMessage(message);
    expect(split.fields.map((f) => f.name)).toEqual(['subject', 'bcc', 'to']);
    expect(fieldValue(split.fields[0])).toBe('a b');
    expect(split.eol).toBe('\r\n');
    expect(rewriteMessage(split, new Set(['bcc']), ['Date: now']).toString('latin1')).toBe(
      'Subject: a\r\n b\r\nTo: t@y.test\r\nDate: now\r\n\r\nbody\r\n\r\nmore Bcc: no\r\n',
    );
  });

  it('handles LF messages, 8-bit headers and a message without a body', () => {
    const lf = splitMessage(Buffer.from('Subject: \xe9\nTo: t@y.test\n\nbody\n', 'latin1'));
    expect(lf.eol).toBe('\n');
    expect(rewriteMessage(lf, new Set(), ['X: 1']).toString('latin1')).toBe('Subject: \xe9\nTo: t@y.test\nX: 1\n\nbody\n');
    const headersOnly = splitMessage(Buffer.from('Subject: x'));
    expect(rewriteMessage(headersOnly, new Set(), ['X: 1']).toString()).toBe('Subject: x\r\nX: 1\r\n');
  });

  it('finds a header line over 998 octets (line ending excluded, 8-bit bytes counted), not a long folded field or body line', () => {
    const at998 = `X-A: ${'a'.repeat(993)}`;
    expect(
      overlongHeaderLine(
        splitMessage(Buffer.from(`${at998}\r\nX-B: ${`${'b'.repeat(900)}\r\n `.repeat(5)}end\r\n\r\n${'c'.repeat(5000)}\r\n`)).fields,
      ),
    ).toBeNull();
    expect(overlongHeaderLine(splitMessage(Buffer.from(`${at998}\n\nbody\n`)).fields)).toBeNull();
    const folded = splitMessage(Buffer.from(`Subject: x\r\nX-B: ok\r\n ${'b'.repeat(998)}\r\n\r\nbody\r\n`));
    expect(overlongHeaderLine(folded.fields)).toEqual({ field: folded.fields[1], octets: 999 });
    const eightBit = splitMessage(Buffer.from(`X-A: ${'\u00e9'.repeat(497)}\r\n\r\n`, 'utf8'));
    expect(overlongHeaderLine(eightBit.fields)?.octets).toBe(999);
  });

  it('writes RFC 5322 dates in UTC', () => {
    expect(rfc5322Date(new Date('2026-01-02T03:04:05Z'))).toBe('Fri, 02 Jan 2026 03:04:05 +0000');
  });
});
