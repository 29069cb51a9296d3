import type { INestApplicationContext } from '@nestjs/common';
import { createTransport } from 'nodemailer';
import { ApiKeysService, TeamsService } from '@herald/accounts';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { EmailsService } from '@herald/emails';
import { RelayHost } from '@herald/smtp';
import { isolatedConfig, type IsolatedConfig } from '@herald/testing';
import { markVerified } from '../../../../test/support/api-harness';
import { startSmtp } from '../smtp.app';

/** The smtp role as deployed (real send path, Postgres, Redis, NATS): the relay listeners it runs. */
describe('the smtp role runs the SMTP relay', () => {
  let isolated: IsolatedConfig;
  let app: INestApplicationContext;
  let relay: RelayHost;
  let token: string;
  let teamId: string;
  const domain = 'relay.acme.test';

  beforeAll(async () => {
    isolated = await isolatedConfig({ BOUNCE_MX_HOST: '127.0.0.1', BOUNCE_MX_PORT: '0' });
    app = await startSmtp(isolated.config);
    relay = app.get(RelayHost);
    const team = await app.get(TeamsService).create({ name: 'Relay team', rateLimit: 10_000 });
    teamId = team.id;
    token = (await app.get(ApiKeysService).create(team.id, { name: 'smtp', permission: 'sending_access' })).token;
    const domains = app.get(DomainsService);
    const repository = app.get(DomainsRepository);
    const created = await domains.create({ teamId: team.id, homeRegion: team.homeRegion }, { name: domain });
    await markVerified(repository, created.id);
  });

  afterAll(async () => {
    await app?.close();
    await isolated?.cleanup();
  });

  const transport = (mode: 'tls' | 'starttls', pass: string) =>
    createTransport({
      host: '127.0.0.1',
      port: relay.port(mode),
      secure: mode === 'tls',
      requireTLS: mode === 'starttls',
      auth: { user: 'herald', pass },
      tls: { rejectUnauthorized: false },
    });

  it('binds the configured listeners (port 0: free ports)', () => {
    expect(relay.listeners()).toEqual([
      { port: expect.any(Number), mode: 'tls' },
      { port: expect.any(Number), mode: 'starttls' },
    ]);
    expect(relay.listeners().every((l) => l.port > 0)).toBe(true);
  });

  it.each(['tls', 'starttls'] as const)('accepts an email over %s and answers 250 with its id, once it is stored', async (mode) => {
    const smtp = transport(mode, token);
    try {
      const info = await smtp.sendMail({ from: `App <app@${domain}>`, to: 'delivered@herald.test', subject: `over ${mode}`, text: 'Hello' });
      const id = /^250 2\.0\.0 OK (\S+)$/.exec(info.response)?.[1];
      expect(id).toBeDefined();
      const email = await app.get(EmailsService).get(teamId, id!);
      expect(email).toMatchObject({ id, subject: `over ${mode}` });
    } finally {
      smtp.close();
    }
  });

  it('refuses a wrong API key with 535', async () => {
    const smtp = transport('tls', 'hr_not_a_key');
    try {
      await expect(smtp.sendMail({ from: `app@${domain}`, to: 'delivered@herald.test', text: 'x' })).rejects.toMatchObject({ responseCode: 535 });
    } finally {
      smtp.close();
    }
  });
});
