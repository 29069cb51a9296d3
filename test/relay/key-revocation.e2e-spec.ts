import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { RELAY_REPLIES, RelayHost } from '@herald/smtp';
import { RawSmtpClient } from '@herald/testing';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';

jest.setTimeout(60_000);
const run = promisify(execFile);

const CACHE_SECONDS = 2;

/**
 * The issue's case from outside: a key made and deleted over HTTP (the api role) while an SMTP
 * session it authenticated stays open on the smtp role (its own key cache), API_KEY_CACHE_SECONDS
 * at 2 s instead of 30; and a client guessing keys.
 */
describe('SMTP relay: a deleted key and failed logins', () => {
  let world: DeliveryWorld;
  let team: TestTeam;
  let relay: RelayHost;

  beforeAll(async () => {
    world = await DeliveryWorld.start({ API_KEY_CACHE_SECONDS: String(CACHE_SECONDS) }, { worker: false });
    team = await world.team();
    relay = world.smtp.get(RelayHost);
  });

  afterAll(() => world?.close());

  it('DELETE /api-keys/:id: the open session is refused (530 5.7.0) and closed within API_KEY_CACHE_SECONDS', async () => {
    const created = await call(world.api.url, team.token, 'POST', '/api-keys', { name: 'relay', permission: 'sending_access' });
    expect(created.status).toBe(200);
    const client = await RawSmtpClient.connect(relay.port('starttls'), 'starttls');
    try {
      expect(await client.login(created.body.token, { starttls: true })).toBe('235 Authentication successful');
      expect(await client.command(`MAIL FROM:<${team.from()}>`)).toBe('250 Accepted');
      expect(await client.command('RSET')).toBe('250 Flushed');
      expect((await call(world.api.url, team.token, 'DELETE', `/api-keys/${created.body.id}`)).status).toBe(200);
      const deletedAt = Date.now();
      let reply = '';
      while (Date.now() - deletedAt < 20_000) {
        reply = await client.command(`MAIL FROM:<${team.from()}>`);
        if (reply !== '250 Accepted') break;
        expect(await client.command('RSET')).toBe('250 Flushed');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const elapsed = Date.now() - deletedAt;
      console.log(`deleted over HTTP: the SMTP session was refused ${elapsed} ms later (API_KEY_CACHE_SECONDS=${CACHE_SECONDS})`);
      expect(reply).toBe(`530 ${RELAY_REPLIES.keyRevoked.text}`);
      await client.closed;
      expect(elapsed).toBeLessThan(CACHE_SECONDS * 1000 + 5000);
    } finally {
      client.destroy();
    }
  });

  it('guessing keys: 535 three times on one connection, then 421 4.7.0 and the close; swaks from the same address is cut off after 10', async () => {
    const client = await RawSmtpClient.connect(relay.port('tls'), 'tls', '127.0.0.1', '127.0.0.50');
    try {
      await client.command('EHLO guesser.test');
      const replies: string[] = [];
      for (let i = 0; i < 20; i++) {
        try {
          replies.push(await client.command(`AUTH PLAIN ${Buffer.from(`\0herald\0hr_guess_${i}`).toString('base64')}`));
        } catch {
          break;
        }
      }
      replies.push(...client.pending());
      expect(replies).toEqual([
        '535 5.7.8 Authentication credentials invalid',
        '535 5.7.8 Authentication credentials invalid',
        '535 5.7.8 Authentication credentials invalid',
        `421 ${RELAY_REPLIES.tooManyAuthFailures.text}`,
      ]);
      await client.closed;
    } finally {
      client.destroy();
    }
    // the same address keeps guessing on new connections (swaks, AUTH LOGIN): after 10 failures every AUTH gets 421 unchecked
    const swaks = (password: string) =>
      run('swaks', [
        '--server',
        `127.0.0.1:${relay.port('starttls')}`,
        '--local-interface',
        '127.0.0.50',
        '--tls',
        '--auth',
        'LOGIN',
        '--auth-user',
        'herald',
        '--auth-password',
        password,
        '--from',
        team.from(),
        '--to',
        'x@inbox.test',
        '--quit-after',
        'AUTH',
      ]).then(
        ({ stdout }) => stdout,
        (error: { stdout: string }) => error.stdout,
      );
    /** swaks's transcript: the reply to the password (`<~` is a reply over TLS, `<~*` an error). */
    const authReply = (stdout: string) => /334 UGFzc3dvcmQ6\n[^\n]*\n<~\*?\s+([^\n]*)/.exec(stdout)?.[1];
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < 8; i++) answers.push(authReply(await swaks(`hr_guess_again_${i}`)));
    expect(answers.slice(0, 7)).toEqual(Array(7).fill('535 5.7.8 Authentication credentials invalid'));
    // 3 + 7 = 10 failures from 127.0.0.50: from now on every AUTH from it gets 421, unchecked, the right key too
    expect(answers[7]).toBe(`421 ${RELAY_REPLIES.addressBlocked.text}`);
    expect(authReply(await swaks(team.token))).toBe(`421 ${RELAY_REPLIES.addressBlocked.text}`);
    // while another address logs in with it
    const neighbour = await RawSmtpClient.connect(relay.port('tls'), 'tls', '127.0.0.1', '127.0.0.51');
    expect(await neighbour.login(team.token, { starttls: false })).toBe('235 Authentication successful');
    neighbour.destroy();
  });
});
