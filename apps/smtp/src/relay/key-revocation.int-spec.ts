import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiKeysService, TeamsService } from '@herald/accounts';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { RELAY_REPLIES, RelayHost } from '@herald/smtp';
import { isolatedConfig, RawSmtpClient, type IsolatedConfig } from '@herald/testing';
import { markVerified } from '../../../../test/support/api-harness';
import { startSmtp } from '../smtp.app';

const CACHE_SECONDS = 1;
const REVOKED = `530 ${RELAY_REPLIES.keyRevoked.text}`;

/**
 * A key deleted while an SMTP session it authenticated is open: the smtp role as deployed (real
 * API key lookup and cache, Postgres, Redis, NATS), API_KEY_CACHE_SECONDS shortened to 1 s.
 */
describe('the smtp role stops a session whose API key is deleted', () => {
  let isolated: IsolatedConfig;
  let app: INestApplicationContext;
  let relay: RelayHost;
  let teamId: string;
  const domain = 'revoke.acme.test';
  const from = `app@${domain}`;
  const message = `From: ${from}\r\nTo: bob@herald.test\r\nSubject: revoked?\r\n\r\nHello\r\n.`;

  beforeAll(async () => {
    isolated = await isolatedConfig({ BOUNCE_MX_HOST: '127.0.0.1', BOUNCE_MX_PORT: '0', API_KEY_CACHE_SECONDS: String(CACHE_SECONDS) });
    app = await startSmtp(isolated.config);
    relay = app.get(RelayHost);
    const team = await app.get(TeamsService).create({ name: 'Revocation team', rateLimit: 10_000 });
    teamId = team.id;
    const created = await app.get(DomainsService).create({ teamId, homeRegion: team.homeRegion }, { name: domain });
    await markVerified(app.get(DomainsRepository), created.id);
  });

  afterAll(async () => {
    await app?.close();
    await isolated?.cleanup();
  });

  const newKey = () => app.get(ApiKeysService).create(teamId, { name: 'smtp', permission: 'sending_access' });
  const emailCount = async () => Number((await app.get(DataSource).query('SELECT count(*) AS n FROM emails'))[0].n);

  async function session(token: string): Promise<RawSmtpClient> {
    const client = await RawSmtpClient.connect(relay.port('tls'), 'tls');
    await client.command('EHLO client.test');
    expect(await client.command(`AUTH PLAIN ${Buffer.from(`\0herald\0${token}`).toString('base64')}`)).toBe('235 Authentication successful');
    return client;
  }

  async function send(client: RawSmtpClient): Promise<string> {
    expect(await client.command(`MAIL FROM:<${from}>`)).toBe('250 Accepted');
    expect(await client.command('RCPT TO:<bob@herald.test>')).toBe('250 Accepted');
    expect(await client.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
    return client.command(message);
  }

  it('deleted by another process (its own cache): refused within API_KEY_CACHE_SECONDS at MAIL FROM with 530, and closed', async () => {
    const key = await newKey();
    const client = await session(key.token);
    try {
      expect(await send(client)).toMatch(/^250 2\.0\.0 OK [0-9a-f-]{36}$/);
      // what DELETE /api-keys/:id does in an api process: the row goes; this process's cache is not told
      await app.get(DataSource).query('DELETE FROM api_keys WHERE id = $1', [key.id]);
      const deletedAt = Date.now();
      let reply = '';
      let accepted = 0;
      while (Date.now() - deletedAt < 15_000) {
        reply = await client.command(`MAIL FROM:<${from}>`);
        if (reply !== '250 Accepted') break;
        accepted++;
        expect(await client.command('RSET')).toBe('250 Flushed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const elapsed = Date.now() - deletedAt;
      console.log(`key deleted elsewhere: ${accepted} MAIL FROM still accepted, refused after ${elapsed} ms (cache ${CACHE_SECONDS} s)`);
      expect(reply).toBe(REVOKED);
      await client.closed;
      // the cache entry lives CACHE_SECONDS; the rest is slack for a loaded machine
      expect(elapsed).toBeLessThan(CACHE_SECONDS * 1000 + 5000);
      // and the key gets no new session
      const retry = await RawSmtpClient.connect(relay.port('tls'), 'tls');
      await retry.command('EHLO client.test');
      expect(await retry.command(`AUTH PLAIN ${Buffer.from(`\0herald\0${key.token}`).toString('base64')}`)).toBe(
        '535 5.7.8 Authentication credentials invalid',
      );
      retry.destroy();
    } finally {
      client.destroy();
    }
  });

  it('deleted in this process: refused at the very next MAIL FROM', async () => {
    const key = await newKey();
    const client = await session(key.token);
    try {
      expect(await client.command(`MAIL FROM:<${from}>`)).toBe('250 Accepted');
      expect(await client.command('RSET')).toBe('250 Flushed');
      await app.get(ApiKeysService).remove(teamId, key.id);
      expect(await client.command(`MAIL FROM:<${from}>`)).toBe(REVOKED);
      await client.closed;
    } finally {
      client.destroy();
    }
  });

  it('deleted during a transaction: the message is refused at the end of DATA with 530, not stored, and the session closed', async () => {
    const key = await newKey();
    const client = await session(key.token);
    try {
      expect(await client.command(`MAIL FROM:<${from}>`)).toBe('250 Accepted');
      expect(await client.command('RCPT TO:<bob@herald.test>')).toBe('250 Accepted');
      expect(await client.command('DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
      const before = await emailCount();
      await app.get(ApiKeysService).remove(teamId, key.id);
      expect(await client.command(message)).toBe(REVOKED);
      await client.closed;
      expect(await emailCount()).toBe(before);
    } finally {
      client.destroy();
    }
  });
});
