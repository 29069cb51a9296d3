import { classifyRefusal, parseSmtpReply } from './bounce-classification';

const kind = (reply: string) => {
  const b = classifyRefusal(reply);
  return `${b.type}/${b.subType}`;
};

describe('classifyRefusal', () => {
  it.each([
    ['550 5.1.1 <a@b.test>: Recipient address rejected: User unknown', 'Permanent/NoEmail'],
    ['550 5.1.10 RESOLVER.ADR.RecipientNotFound', 'Permanent/NoEmail'],
    ['552 5.2.2 mailbox full', 'Transient/MailboxFull'],
    ['552 5.3.4 message size exceeds fixed limit', 'Transient/MessageTooLarge'],
    ['554 5.7.1 Message rejected as spam', 'Transient/ContentRejected'],
    ['554 5.6.1 attachment type not allowed', 'Transient/AttachmentRejected'],
    ['550 5.7.1 Service unavailable; client host blocked using zen.spamhaus.org', 'Transient/General'],
    ['550 5.7.26 unauthenticated email is not accepted', 'Transient/General'],
    ['550 5.7.1 relaying denied', 'Transient/General'],
    ['550 No such user here', 'Permanent/NoEmail'],
    ['550 Requested action not taken: mailbox unavailable', 'Permanent/General'],
    ['550 rate limit exceeds policy', 'Transient/General'],
    ['554 transaction failed', 'Permanent/General'],
  ])('%s → %s', (reply, expected) => {
    expect(kind(reply)).toBe(expected);
  });

  it('keeps the reply as the diagnostic code, smtp-typed', () => {
    expect(classifyRefusal('550  5.1.1   no\r\n').diagnosticCode).toEqual(['smtp; 550 5.1.1 no']);
  });
});

describe('parseSmtpReply', () => {
  it('splits the code, the enhanced status and the text', () => {
    expect(parseSmtpReply('451 4.7.1 try later')).toEqual({ code: 451, enhanced: '4.7.1', text: 'try later' });
    expect(parseSmtpReply('421-busy')).toEqual({ code: 421, enhanced: null, text: 'busy' });
  });
});
