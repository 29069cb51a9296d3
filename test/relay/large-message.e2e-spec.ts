import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createTransport, type Transporter } from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { RELAY_REPLIES } from '@herald/smtp';
import type { MxSink } from '@herald/testing';
import type { TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { freePort } from '../support/herald-process';
import { startWorkerProcess, waitUntil, workerEnv, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

/** MAX_EMAIL_BYTES's default (40 MiB): the relay's SIZE. */
const MAX_BYTES = 40 * 1024 * 1024;
/** Random bytes whose base64 attachment makes a message just under MAX_BYTES (about 41.6 MB). */
const ATTACHMENT_BYTES = 30_400_000;

const status = (pid: number) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kib = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status(pid))![1]);
const mib = (k: number) => (k / 1024).toFixed(1);
/** Resets the process's peak resident size (VmHWM) to its current one (Linux 4.0+); false where that is not allowed. */
const resetPeak = (pid: number) => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
};
const bodyOf = (message: Buffer) => message.subarray(message.indexOf('\r\n\r\n') + 4);

/**
 * The relay streams a large message to Postgres as it arrives: a message of 40 MB (a random,
 * incompressible attachment) sent with nodemailer through a `herald smtp` child process is
 * delivered to the MX byte for byte with a DKIM signature that verifies, while the smtp process's
 * resident memory grows by less than twice the message's size; and a message past the limit
 * still gets 552, its stored chunks deleted.
 */
describe('SMTP relay: a 40 MB message', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let sink: MxSink;
  let smtp: WorkerProcess;
  let relay: Transporter;

  beforeAll(async () => {
    // the worker's idle timeout is the MX's time to answer a message it has to store first
    world = await DeliveryWorld.start({ DELIVERY_COMMAND_TIMEOUT_MS: '30000' });
    const port = await freePort();
    const env = workerEnv(world.api.config, {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORTS: `${port}:starttls`,
      BOUNCE_MX_HOST: '127.0.0.1',
      BOUNCE_MX_PORT: '0',
      MAX_EMAIL_BYTES: String(MAX_BYTES),
    });
    // the child starts while the team and the sink are made
    const started = startWorkerProcess(env, { role: 'smtp' });
    [team, sink] = await Promise.all([world.team(), world.sink()]);
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    smtp = await started;
    relay = createTransport({
      host: '127.0.0.1',
      port,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'herald', pass: team.token },
    });
  });

  afterAll(async () => {
    relay?.close();
    await smtp?.stop();
    await world?.close();
  });

  const compose = (to: string, attachment: Buffer) =>
    new MailComposer({
      from: `Acme <${team.from()}>`,
      to,
      subject: `${attachment.length} random bytes`,
      text: 'The attachment is random.',
      attachments: [{ filename: 'random.bin', content: attachment }],
    })
      .compile()
      .build();
  const send = async (to: string, message: Buffer) => {
    const info = await relay.sendMail({ envelope: { from: team.from(), to: [to] }, raw: message });
    const id = /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec((info.response ?? '').trim())?.[1];
    if (!id) throw new Error(`not accepted: ${info.response}`);
    return id;
  };
  const uploadsLeft = async () => Number((await world.db.query(`SELECT count(*) AS n FROM email_mime_uploads`)).rows[0].n);

  let message: Buffer;

  it('arrives intact and DKIM-signed, the smtp process growing by less than twice its size', async () => {
    // warm-up: a small message and one past the spool's threshold, so code, TLS and the pool are loaded
    for (const [i, size] of [1000, 3_000_000].entries())
      await world.waitForEvent(await send(`warm${i}@inbox.test`, await compose(`warm${i}@inbox.test`, randomBytes(size))), 'email.delivered', 30_000);
    sink.reset();

    message = await compose('big@inbox.test', randomBytes(ATTACHMENT_BYTES));
    expect(message.length).toBeGreaterThan(40_000_000);
    expect(message.length).toBeLessThanOrEqual(MAX_BYTES);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const peakReset = resetPeak(smtp.pid);
    const baseline = kib(smtp.pid, 'VmRSS');
    let sampled = baseline;
    const sampler = setInterval(() => (sampled = Math.max(sampled, kib(smtp.pid, 'VmRSS'))), 5);
    const started = Date.now();
    let id: string;
    try {
      id = await send('big@inbox.test', message);
    } finally {
      clearInterval(sampler);
    }
    const sentMs = Date.now() - started;
    const peak = Math.max(sampled, peakReset ? kib(smtp.pid, 'VmHWM') : 0);
    const growth = (peak - baseline) * 1024;
    console.log(
      `40 MB relay: message ${message.length} bytes accepted in ${sentMs} ms; smtp role RSS ${mib(baseline)} MiB before, ` +
        `peak ${mib(peak)} MiB (${peakReset ? 'VmHWM after clear_refs, and' : ''} VmRSS sampled every 5 ms): ` +
        `growth ${mib(peak - baseline)} MiB = ${(growth / message.length).toFixed(2)}x the message`,
    );
    expect(growth).toBeLessThan(2 * message.length);
    // the chunks were joined into the email's message and deleted in the commit
    expect(await uploadsLeft()).toBe(0);

    await world.waitForEvent(id, 'email.delivered', 60_000);
    expect(sink.messages).toHaveLength(1);
    const [delivered] = sink.messages;
    expect(bodyOf(delivered.raw).equals(bodyOf(message))).toBe(true);
    const auth: any = await world.authenticateAtSink(delivered);
    expect(auth.dkim.results[0].status.result).toBe('pass');
  });

  it('answers 552 to a message past MAX_EMAIL_BYTES, and deletes what it stored of it', async () => {
    // the same message with an epilogue (after its last boundary) that takes it past the limit
    const epilogue = Buffer.from(`${'e'.repeat(76)}\r\n`.repeat(Math.ceil((MAX_BYTES - message.length + 100_000) / 78)));
    const tooBig = Buffer.concat([message, epilogue]);
    expect(tooBig.length).toBeGreaterThan(MAX_BYTES);
    await expect(send('toobig@inbox.test', tooBig)).rejects.toMatchObject({
      responseCode: 552,
      response: `552 ${RELAY_REPLIES.tooBig(MAX_BYTES).text}`,
    });
    await waitUntil("the refused message's chunks deleted", async () => (await uploadsLeft()) === 0, 10_000);
    expect(smtp.child.exitCode).toBeNull();
  });
});
