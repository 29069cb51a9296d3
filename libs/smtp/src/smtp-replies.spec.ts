import { FakePort, RelayHarness } from '../../../test/support/relay-harness';
import { BOUNCE_MX_REPLIES, RELAY_REPLIES, SMTP_SUBMISSION_REPLIES, type SmtpReply, type WireReply } from './smtp-replies';

const line = (r: WireReply) => `${r.code} ${r.text}`;
const submission = (r: SmtpReply) => `${r.code} ${r.enhanced} ${r.message}`;

/**
 * Every reply Herald writes on SMTP, pinned to the bytes it wrote when each was still built inline
 * (in smtp-relay.ts, session-credentials.ts, source-routes.ts, bounce-mx.ts and
 * smtp-submissions.service.ts): gathering them into one module changed no reply on the wire.
 */
describe('SMTP replies', () => {
  it('of the relay', () => {
    expect(Object.fromEntries(Object.entries(RELAY_REPLIES).map(([k, r]) => [k, typeof r === 'function' ? null : line(r)]))).toEqual({
      greeting: '220 Herald SMTP relay',
      authRequired: '530 5.7.0 Authentication required',
      startTlsFirst: '530 5.7.0 Must issue a STARTTLS command first',
      unknownAuthMethod: '504 5.5.4 Unrecognized authentication type',
      authTemporary: '454 4.7.0 Temporary authentication failure, try again later',
      keyRevoked: '530 5.7.0 Authentication required: the API key of this session was revoked or deleted',
      tooManyAuthFailures: '421 4.7.0 Too many failed authentication attempts, closing connection',
      tooManyClientConnections: '421 4.7.0 Too many connections from your address, try again later',
      tooManyConnections: '421 4.3.2 Too many connections, try again later',
      addressBlocked: '421 4.7.0 Too many failed authentication attempts from your address, try again later',
      sourceRoute: '553 5.1.3 Source routes are not accepted: give the final address only',
      tryLater: '451 4.3.0 Temporary failure, try again later',
      sessionTooLong: '421 4.4.2 Session too long, closing connection',
      shuttingDown: '421 4.3.2 Service shutting down, try again later',
      bareLf: '550 5.6.11 Message refused: bare LF line ending (lines must end with CRLF)',
      bareCr: '550 5.6.11 Message refused: bare CR (lines must end with CRLF)',
      tooBig: null,
      accepted: null,
    });
    expect(line(RELAY_REPLIES.tooBig(4096))).toBe('552 5.3.4 Message exceeds fixed maximum message size 4096');
    expect(line(RELAY_REPLIES.accepted('e-1'))).toBe('250 2.0.0 OK e-1');
  });

  it('of the bounce MX', () => {
    expect(line(BOUNCE_MX_REPLIES.greeting)).toBe('220 bounce and feedback MX');
    expect(line(BOUNCE_MX_REPLIES.noSuchUser)).toBe('550 5.1.1 no such user here');
    expect(line(BOUNCE_MX_REPLIES.tooBig(10))).toBe('552 5.3.4 message exceeds fixed maximum message size 10');
    expect(line(BOUNCE_MX_REPLIES.notAReport)).toBe('250 2.0.0 OK: not a report, ignored');
    expect(line(BOUNCE_MX_REPLIES.recorded)).toBe('250 2.0.0 OK: report recorded');
    expect(line(BOUNCE_MX_REPLIES.tryLater)).toBe('451 4.3.0 try again later');
    expect(line(BOUNCE_MX_REPLIES.tooManyClientConnections)).toBe('421 4.7.0 Too many connections from your address, try again later');
    expect(line(BOUNCE_MX_REPLIES.tooManyConnections)).toBe('421 4.3.2 Too many connections, try again later');
  });

  it('of the submission checks', () => {
    const r = SMTP_SUBMISSION_REPLIES;
    expect(
      [
        r.invalidCredentials,
        r.authTemporary,
        r.nullSender,
        r.malformedSender('a@', 'not an address'),
        r.rateLimited(3),
        r.malformedRecipient('b@', 'not an address'),
        r.tooManyRecipients,
        r.suppressed('c@x.test'),
        r.tooBig(100),
        r.noRecipients,
        r.overlongHeader(1200, ' (Subject)', 998),
        r.badIdempotencyKey(256),
        r.unparsable('boom'),
        r.noFrom,
        r.checkingSender,
        r.checkingRecipient,
        r.storing,
      ].map(submission),
    ).toEqual([
      '535 5.7.8 Authentication credentials invalid',
      '454 4.7.0 Temporary authentication failure, try again later',
      '553 5.1.7 The null sender is not accepted: MAIL FROM must be an address on your domain',
      '553 5.1.7 Malformed sender address <a@>: not an address',
      '451 4.7.1 Rate limit exceeded, try again in 3 s',
      '553 5.1.3 Malformed or refused recipient address <b@>: not an address',
      '452 4.5.3 Too many recipients',
      '550 5.1.1 <c@x.test> is on the suppression list (previous bounce or complaint)',
      '552 5.3.4 Message size exceeds the limit of 100 bytes',
      '554 5.5.1 No valid recipients',
      '550 5.6.0 Message refused: a header line is 1200 octets long (Subject), RFC 5322 allows 998: fold it, or encode long words (RFC 2047)',
      '550 5.6.0 The Herald-Idempotency-Key (or Resend-Idempotency-Key) header must be one value of 1-256 characters',
      '550 5.6.0 The message could not be parsed: boom',
      '550 5.7.1 The message must have a From header with exactly one valid address on a domain you have verified',
      '451 4.3.0 Temporary failure checking the sender, try again later',
      '451 4.3.0 Temporary failure checking the recipient, try again later',
      '451 4.3.0 Temporary failure storing the message, try again later',
    ]);
  });

  describe('on the wire', () => {
    const harness = new RelayHarness();
    afterEach(() => harness.cleanup());

    it('the relay greets with its hostname and Herald SMTP relay', async () => {
      const relay = await harness.start(new FakePort());
      const c = await harness.client(relay, 'tls');
      expect(c.greeting).toBe('220 smtp.us-east-1.herald.test ESMTP Herald SMTP relay');
    });

    it('a source route is refused with 553 5.1.3', async () => {
      const relay = await harness.start(new FakePort());
      const c = await harness.authenticated(relay);
      expect(await c.command('MAIL FROM:<@relay.test:app@acme.test>')).toBe('553 5.1.3 Source routes are not accepted: give the final address only');
      expect(await c.command('MAIL FROM:<app@acme.test>')).toBe('250 Accepted');
      expect(await c.command('RCPT TO:<@relay.test,@mx.test:bob@example.com>')).toBe(
        '553 5.1.3 Source routes are not accepted: give the final address only',
      );
    });
  });
});
