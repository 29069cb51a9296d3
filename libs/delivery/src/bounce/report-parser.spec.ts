import { arfComplaint, autoReply, ORIGINAL_MESSAGE_ID, postfixDsn } from '../../../../test/support/report-fixtures';
import { bounceOfDsnRecipient, parseReport, type DsnRecipient } from './report-parser';

const RETURN_PATH = 'b-3f2b8c1e9a4d4e6f8b7a1c2d3e4f5a6b-abcdefghij@send.acme.test';

describe('parseReport', () => {
  it('reads every recipient of a Postfix DSN and the original Message-ID', async () => {
    expect(await parseReport(postfixDsn(RETURN_PATH))).toEqual({
      kind: 'dsn',
      originalMessageId: ORIGINAL_MESSAGE_ID,
      recipients: [
        {
          recipient: 'jane@example.test',
          action: 'failed',
          status: '5.1.1',
          diagnostic: '550 5.1.1 <jane@example.test>: Recipient address rejected: User unknown',
          remoteMta: 'mail.example.test',
        },
        {
          recipient: 'bob@example.test',
          action: 'delayed',
          status: '4.4.1',
          diagnostic: 'connect to mail.example.test[192.0.2.10]:25: Connection timed out',
          remoteMta: null,
        },
      ],
    });
  });

  it('reads an ARF complaint and the embedded original', async () => {
    expect(await parseReport(arfComplaint(RETURN_PATH))).toEqual({
      kind: 'complaint',
      feedbackType: 'abuse',
      recipient: 'jane@example.test',
      originalMailFrom: RETURN_PATH,
      originalMessageId: ORIGINAL_MESSAGE_ID,
      originalTo: ['jane@example.test'],
    });
  });

  it('finds the report when it travels base64-encoded', async () => {
    const dsn = postfixDsn(RETURN_PATH).toString();
    const [head, rest] = dsn.split('Content-Type: message/delivery-status\r\n\r\n');
    const [status, tail] = rest.split('\r\n--4Qx9Kd2bLnz9sT');
    const encoded = `${head}Content-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(status).toString('base64')}\r\n--4Qx9Kd2bLnz9sT${tail}`;
    const report = await parseReport(Buffer.from(encoded));
    expect(report?.kind === 'dsn' && report.recipients.map((r) => r.action)).toEqual(['failed', 'delayed']);
  });

  it('returns null for a message that is not a report', async () => {
    expect(await parseReport(autoReply(RETURN_PATH))).toBeNull();
    expect(await parseReport(Buffer.from('garbage without headers'))).toBeNull();
  });
});

describe('bounceOfDsnRecipient', () => {
  const recipient = (overrides: Partial<DsnRecipient>): DsnRecipient => ({
    recipient: 'jane@example.test',
    action: 'failed',
    status: '5.1.1',
    diagnostic: '550 5.1.1 <jane@example.test>: User unknown',
    remoteMta: 'mail.example.test',
    ...overrides,
  });

  it('classifies a failed recipient', () => {
    expect(bounceOfDsnRecipient(recipient({}))).toMatchObject({
      type: 'Permanent',
      subType: 'NoEmail',
      diagnosticCode: ['smtp; 550 5.1.1 <jane@example.test>: User unknown'],
    });
  });

  it('takes the Status into account when the diagnostic has no enhanced code', () => {
    expect(bounceOfDsnRecipient(recipient({ status: '5.2.2', diagnostic: '552 sorry' }))).toMatchObject({
      type: 'Transient',
      subType: 'MailboxFull',
    });
    expect(bounceOfDsnRecipient(recipient({ status: '5.1.1', diagnostic: null }))).toMatchObject({
      type: 'Permanent',
      subType: 'NoEmail',
      diagnosticCode: ['smtp; 550 5.1.1'],
    });
  });

  it('prefers a specific diagnostic code over a generic 5.0.0 Status', () => {
    expect(bounceOfDsnRecipient(recipient({ status: '5.0.0', diagnostic: '550 5.2.2 mailbox full' }))).toMatchObject({ subType: 'MailboxFull' });
  });

  it.each(['delayed', 'delivered', 'relayed', 'expanded'])('is null for %s', (action) => {
    expect(bounceOfDsnRecipient(recipient({ action }))).toBeNull();
  });
});
