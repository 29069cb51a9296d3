import { spawn } from 'node:child_process';
import { createTransport } from 'nodemailer';
import type { SmtpRelayOptions } from './smtp-relay';
import { FakePort, KEY, RelayHarness } from '../../../test/support/relay-harness';

/** Clients applications use (nodemailer, Python's smtplib) send through the relay as they are. */
describe('SmtpRelay with real clients', () => {
  const harness = new RelayHarness();
  afterEach(() => harness.cleanup());
  const start = (port: FakePort, options: Partial<SmtpRelayOptions> = {}) => harness.start(port, options);

  it.each([
    ['implicit TLS (secure: true)', 'tls', { secure: true }],
    ['STARTTLS (requireTLS: true)', 'starttls', { secure: false, requireTLS: true }],
  ] as const)('nodemailer sends over %s', async (_name, mode, options) => {
    const port = new FakePort();
    const relay = await start(port, { maxBytes: 1024 * 1024 });
    const transport = createTransport({
      host: '127.0.0.1',
      port: relay.port(mode),
      ...options,
      auth: { user: 'herald', pass: KEY },
      tls: { rejectUnauthorized: false },
    });
    try {
      const info = await transport.sendMail({
        from: 'App <app@acme.test>',
        to: 'bob@example.com',
        bcc: 'audit@example.com',
        subject: 'Hello',
        text: 'Hi Bob',
        attachments: [{ filename: 'a.txt', content: 'attached' }],
      });
      expect(info.response).toBe('250 2.0.0 OK email-1');
      expect(port.submits[0]!.envelope).toEqual({ mailFrom: 'app@acme.test', rcptTo: ['bob@example.com', 'audit@example.com'] });
      expect(port.submits[0]!.raw.toString()).toContain('Subject: Hello');
      const wrong = createTransport({
        host: '127.0.0.1',
        port: relay.port(mode),
        ...options,
        auth: { user: 'herald', pass: 'hr_wrong' },
        tls: { rejectUnauthorized: false },
      });
      await expect(wrong.sendMail({ from: 'app@acme.test', to: 'bob@example.com', text: 'x' })).rejects.toMatchObject({ responseCode: 535 });
      wrong.close();
    } finally {
      transport.close();
    }
  });

  it.each(['ssl', 'starttls'])("Python's smtplib sends (%s)", async (mode) => {
    const port = new FakePort();
    const relay = await start(port);
    const result = await python(mode, relay.port(mode === 'ssl' ? 'tls' : 'starttls'), KEY);
    expect(result).toEqual({ auth: [235, 'Authentication successful'], data: [250, '2.0.0 OK email-1'] });
    expect(port.submits[0]!.envelope).toEqual({ mailFrom: 'app@acme.test', rcptTo: ['bob@example.com'] });
    expect(await python(mode, relay.port(mode === 'ssl' ? 'tls' : 'starttls'), 'hr_wrong')).toEqual({
      auth: [535, '5.7.8 Authentication credentials invalid'],
    });
  });
});

const SMTPLIB = `
import json, smtplib, ssl, sys
mode, port, password = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
out = {}
s = smtplib.SMTP_SSL('127.0.0.1', port, context=ctx, timeout=10) if mode == 'ssl' else smtplib.SMTP('127.0.0.1', port, timeout=10)
if mode == 'starttls':
    s.starttls(context=ctx)
try:
    code, resp = s.login('herald', password)
    out['auth'] = [code, resp.decode()]
except smtplib.SMTPAuthenticationError as e:
    out['auth'] = [e.smtp_code, e.smtp_error.decode()]
    print(json.dumps(out)); sys.exit(0)
s.mail('app@acme.test')
s.rcpt('bob@example.com')
code, resp = s.data('From: app@acme.test\\r\\nTo: bob@example.com\\r\\nSubject: smtplib\\r\\n\\r\\nHello from Python.\\r\\n')
out['data'] = [code, resp.decode()]
s.quit()
print(json.dumps(out))
`;

async function python(mode: string, port: number, password: string): Promise<unknown> {
  const child = spawn('python3', ['-c', SMTPLIB, mode, String(port), password], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`python3 exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}
