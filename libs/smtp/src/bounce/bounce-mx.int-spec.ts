import { createTransport } from 'nodemailer';
import { returnPathAddress, verpKey, type ReceivedReport } from '@herald/delivery';
import { RawSmtpClient } from '@herald/testing';
import { arfComplaint, autoReply, ORIGINAL_MESSAGE_ID, postfixDsn } from '../../../../test/support/report-fixtures';
import { BOUNCE_MX_REPLIES } from '../smtp-replies';
import { BounceMx } from './bounce-mx';

const key = verpKey(undefined);
const EMAIL_A = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
const EMAIL_B = '0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d';
const addressA = returnPathAddress(EMAIL_A, 'send.acme.test', key);
const addressB = returnPathAddress(EMAIL_B, 'send.acme.test', key);
const MAX_BYTES = 64 * 1024;

describe('BounceMx', () => {
  let mx: BounceMx;
  let received: ReceivedReport[];
  let failWith: Error | null;

  beforeAll(async () => {
    mx = await BounceMx.start({
      host: '127.0.0.1',
      port: 0,
      hostname: 'bounces.herald.test',
      maxBytes: MAX_BYTES,
      key,
      onReport: (report) => {
        if (failWith) return Promise.reject(failWith);
        received.push(report);
        return Promise.resolve();
      },
      logger: { warn: () => undefined },
    });
  });
  afterAll(() => mx.close());
  beforeEach(() => {
    received = [];
    failWith = null;
  });

  const send = (to: string[], raw: Buffer) => {
    const transport = createTransport({ host: '127.0.0.1', port: mx.port, ignoreTLS: true });
    return transport.sendMail({ envelope: { from: '', to }, raw }).finally(() => transport.close());
  };
  const failure = (promise: Promise<unknown>): Promise<{ responseCode?: number; response?: string }> =>
    promise.then(
      () => ({}),
      (error: { responseCode?: number; response?: string }) => error,
    );

  it('hands a DSN over once per VERP recipient', async () => {
    const info = await send([addressA, addressB], postfixDsn(addressA));

    expect(info.accepted).toEqual([addressA, addressB]);
    expect(received.map((r) => r.emailId)).toEqual([EMAIL_A, EMAIL_B]);
    expect(received[0]).toMatchObject({
      envelopeFrom: '',
      remoteAddress: '127.0.0.1',
      report: {
        kind: 'dsn',
        originalMessageId: ORIGINAL_MESSAGE_ID,
        recipients: [{ recipient: 'jane@example.test', action: 'failed' }, { action: 'delayed' }],
      },
    });
  });

  it('hands an ARF complaint over', async () => {
    await send([addressA.toUpperCase()], arfComplaint(addressA));

    expect(received).toEqual([
      expect.objectContaining({
        emailId: EMAIL_A,
        report: expect.objectContaining({ kind: 'complaint', feedbackType: 'abuse', recipient: 'jane@example.test' }),
      }),
    ]);
  });

  it('accepts and ignores a message that is not a report', async () => {
    const info = await send([addressA], autoReply(addressA));

    expect(info.response).toMatch(/^250 /);
    expect(received).toEqual([]);
  });

  it('refuses an unknown or forged recipient with 550 5.1.1', async () => {
    const forged = addressA.replace(/-[a-z2-7]{10}@/, '-aaaaaaaaaa@');
    const error = await failure(send([forged], postfixDsn(forged)));

    expect(error.responseCode).toBe(550);
    expect(error.response).toBe('550 5.1.1 no such user here');
  });

  it('answers 451 when the report cannot be recorded, so the sender retries', async () => {
    failWith = new Error('database down');
    const error = await failure(send([addressA], postfixDsn(addressA)));

    expect(error.responseCode).toBe(451);
    expect(error.response).toBe('451 4.3.0 try again later');
  });

  it('refuses an oversized message with 552', async () => {
    const padding = `X-Padding: ${'x'.repeat(900)}\r\n`.repeat(Math.ceil((MAX_BYTES * 1.5) / 912));
    const error = await failure(send([addressA], Buffer.concat([Buffer.from(padding), postfixDsn(addressA)])));

    expect(error.responseCode).toBe(552);
    expect(received).toEqual([]);
  });

  it('refuses connections past its limits with 421 at connect, per address and in all', async () => {
    const limited = await BounceMx.start({
      host: '127.0.0.1',
      port: 0,
      hostname: 'bounces.herald.test',
      maxBytes: MAX_BYTES,
      key,
      connectionLimits: { perClient: 2, total: 3 },
      onReport: () => Promise.resolve(),
    });
    const held: RawSmtpClient[] = [];
    try {
      held.push(await RawSmtpClient.connect(limited.port, 'starttls', '127.0.0.1', '127.0.0.21'));
      held.push(await RawSmtpClient.connect(limited.port, 'starttls', '127.0.0.1', '127.0.0.21'));
      await expect(RawSmtpClient.connect(limited.port, 'starttls', '127.0.0.1', '127.0.0.21')).rejects.toThrow(
        `unexpected greeting 421 ${BOUNCE_MX_REPLIES.tooManyClientConnections.text}`,
      );
      held.push(await RawSmtpClient.connect(limited.port, 'starttls', '127.0.0.1', '127.0.0.22'));
      await expect(RawSmtpClient.connect(limited.port, 'starttls', '127.0.0.1', '127.0.0.23')).rejects.toThrow(
        `unexpected greeting 421 ${BOUNCE_MX_REPLIES.tooManyConnections.text}`,
      );
      // a closed session frees its place
      held.shift()!.destroy();
      await new Promise((r) => setTimeout(r, 100));
      held.push(await RawSmtpClient.connect(limited.port, 'starttls', '127.0.0.1', '127.0.0.23'));
    } finally {
      held.forEach((c) => c.destroy());
      await limited.close();
    }
  });
});
