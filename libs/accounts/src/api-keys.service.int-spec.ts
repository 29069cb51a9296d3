import { createHash, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { DatabaseModule } from '@herald/database';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { AccountsModule } from './accounts.module';
import { generateApiKey, parseApiKey } from './api-key-format';
import { ApiKeysService } from './api-keys.service';
import { Team } from './team.entity';
import { TeamsService } from './teams.service';

/** A real Nest application context (one "process") on the suite's own migrated schema. */
function start(config: HeraldConfig): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(
    { module: class AccountsKeysSpec {}, imports: [ConfigModule.forRoot(config), DatabaseModule, AccountsModule] },
    { logger: false },
  );
}

/** The same key with another secret and a correct checksum: passes every offline check. */
function withOtherSecret(token: string): string {
  const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const body = `${token.slice(0, 16)}${'Z'.repeat(32)}`;
  let n = crc32(body);
  let check = '';
  for (let i = 0; i < 6; i++, n = Math.floor(n / 62)) check = base62[n % 62] + check;
  return body + check;
}

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (ok(value) || i === 100) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const REST_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00$/;
const MISSING = {
  code: 'missing_api_key',
  message: 'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY',
};
const INVALID = { code: 'invalid_api_key', message: 'API key is invalid' };

describe('ApiKeysService (Postgres)', () => {
  let isolated: IsolatedConfig;
  let app: INestApplicationContext;
  let keys: ApiKeysService;
  let db: DataSource;
  let team: Team;
  let otherTeam: Team;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    app = await start(isolated.config);
    keys = app.get(ApiKeysService);
    db = app.get(DataSource);
    team = await app.get(TeamsService).create({ name: 'Acme', region: 'eu-west-1', plan: 'pro-50k', rateLimit: 25 });
    otherTeam = await app.get(TeamsService).create({ name: 'Globex' });
  });

  /** A bare domain row: accounts knows domains only as the table its keys reference. */
  const addDomain = async (teamId: string, name: string): Promise<string> => {
    const id = randomUUID();
    await db.query(`INSERT INTO domains (id, team_id, name, region) VALUES ($1, $2, $3, 'us-east-1')`, [id, teamId, name]);
    return id;
  };

  afterAll(async () => {
    await app?.close();
    await isolated?.cleanup();
  });

  describe('create', () => {
    it('returns the token once and stores only its hash', async () => {
      const { id, token } = await keys.create(team.id, { name: 'production' });
      expect(parseApiKey(token)).not.toBeNull();
      const [row] = await db.query('SELECT * FROM api_keys WHERE id = $1', [id]);
      expect(row).toMatchObject({ team_id: team.id, name: 'production', permission: 'full_access', domain_id: null });
      expect(row.public_id).toBe(parseApiKey(token)!.publicId);
      expect(row.secret_hash).toEqual(createHash('sha256').update(token).digest());
      const secret = token.slice(16);
      for (const value of Object.values(row)) expect(String(value)).not.toContain(secret);
    });

    it('validates like Resend', async () => {
      await expect(keys.create(team.id, {} as never)).rejects.toMatchObject({ code: 'missing_required_field' });
      await expect(keys.create(team.id, { name: '' })).rejects.toMatchObject({ code: 'missing_required_field' });
      await expect(keys.create(team.id, { name: 'x'.repeat(51) })).rejects.toMatchObject({ code: 'validation_error' });
      await expect(keys.create(team.id, { name: 'k', permission: 'admin' })).rejects.toMatchObject({ code: 'invalid_access' });
      const domainId = '3f1c2b9e-8f5e-4c1a-9a57-0d3b0f3c1e2a';
      await expect(keys.create(team.id, { name: 'k', domain_id: domainId })).rejects.toMatchObject({
        code: 'validation_error',
      });
      await expect(keys.create(team.id, { name: 'k', permission: 'sending_access', domain_id: 'example.com' })).rejects.toMatchObject({
        code: 'validation_error',
      });
    });

    it('restricts a sending key only to a domain of its own team', async () => {
      const ours = await addDomain(team.id, 'keys-ours.example');
      const theirs = await addDomain(otherTeam.id, 'keys-theirs.example');
      const restricted = await keys.create(team.id, { name: 'sender', permission: 'sending_access', domain_id: ours });
      const [row] = await db.query('SELECT domain_id FROM api_keys WHERE id = $1', [restricted.id]);
      expect(row.domain_id).toBe(ours);
      for (const domainId of [theirs, '3f1c2b9e-8f5e-4c1a-9a57-0d3b0f3c1e2a']) {
        await expect(keys.create(team.id, { name: 'k', permission: 'sending_access', domain_id: domainId })).rejects.toMatchObject({
          code: 'validation_error',
          message: expect.stringContaining('Domain not found'),
        });
      }
    });

    it('counts the 50-character limit in characters, as the database does', async () => {
      await expect(keys.create(team.id, { name: '🔑'.repeat(50) })).resolves.toHaveProperty('token');
    });
  });

  describe('authenticate', () => {
    it('returns the principal of a valid key', async () => {
      const { id, token } = await keys.create(team.id, { name: 'ci' });
      await expect(keys.authenticate(`Bearer ${token}`)).resolves.toEqual({
        teamId: team.id,
        keyId: id,
        permission: 'full_access',
        domainId: null,
        team: { id: team.id, plan: 'pro-50k', homeRegion: 'eu-west-1', rateLimit: 25 },
      });
      await expect(keys.authenticate(`bearer  ${token} `)).resolves.toMatchObject({ keyId: id });
    });

    it('carries a sending_access permission and its domain', async () => {
      const domainId = await addDomain(team.id, 'keys-carried.example');
      const { token } = await keys.create(team.id, { name: 'sender', permission: 'sending_access', domain_id: domainId });
      await expect(keys.authenticate(`Bearer ${token}`)).resolves.toMatchObject({ permission: 'sending_access', domainId });
    });

    it('answers missing_api_key without a bearer token', async () => {
      for (const header of [undefined, '', 'Bearer', 'Bearer   ', 'Basic aGVyYWxkOnNlY3JldA==']) {
        await expect(keys.authenticate(header)).rejects.toMatchObject(MISSING);
      }
    });

    it('answers invalid_api_key for a malformed, unknown or wrong-secret key', async () => {
      const { token } = await keys.create(team.id, { name: 'victim' });
      const typo = token.slice(0, 20) + (token[20] === 'a' ? 'b' : 'a') + token.slice(21);
      for (const bad of ['nope', typo, `re_${token.slice(3)}`, generateApiKey().token, withOtherSecret(token)]) {
        await expect(keys.authenticate(`Bearer ${bad}`)).rejects.toMatchObject(INVALID);
      }
      // A wrong secret is refused with a warm cache too.
      await keys.authenticate(`Bearer ${token}`);
      await expect(keys.authenticate(`Bearer ${withOtherSecret(token)}`)).rejects.toMatchObject(INVALID);
    });

    it('shares one lookup among concurrent requests on a cold cache', async () => {
      const { id, token } = await keys.create(team.id, { name: 'burst' });
      const principals = await Promise.all(Array.from({ length: 200 }, () => keys.authenticate(`Bearer ${token}`)));
      expect(new Set(principals).size).toBe(1);
      expect(principals[0]!.keyId).toBe(id);
    });

    it('rejects a deleted key at once in the process that deleted it', async () => {
      const { id, token } = await keys.create(team.id, { name: 'doomed' });
      await keys.authenticate(`Bearer ${token}`);
      await keys.remove(team.id, id);
      await expect(keys.authenticate(`Bearer ${token}`)).rejects.toMatchObject(INVALID);
    });

    it('lets other processes accept a deleted key until their cache entry expires', async () => {
      const cached = await start(isolated.config);
      const uncached = await start({ ...isolated.config, API_KEY_CACHE_SECONDS: 0 });
      try {
        const { id, token } = await keys.create(team.id, { name: 'shared' });
        await cached.get(ApiKeysService).authenticate(`Bearer ${token}`);
        await uncached.get(ApiKeysService).authenticate(`Bearer ${token}`);
        await keys.remove(team.id, id);
        await expect(cached.get(ApiKeysService).authenticate(`Bearer ${token}`)).resolves.toMatchObject({ keyId: id });
        await expect(uncached.get(ApiKeysService).authenticate(`Bearer ${token}`)).rejects.toMatchObject(INVALID);
      } finally {
        await cached.close();
        await uncached.close();
      }
    });

    it('records last use in the background, at most once a minute', async () => {
      const { id, token } = await keys.create(team.id, { name: 'used' });
      const lastUsed = async () => (await keys.list(team.id)).find((k) => k.id === id)!.last_used_at;
      expect(await lastUsed()).toBeNull();
      await keys.authenticate(`Bearer ${token}`);
      const first = await eventually(lastUsed, (v) => v !== null);
      expect(first).toMatch(REST_TIMESTAMP);
      await new Promise((r) => setTimeout(r, 20));
      await keys.authenticate(`Bearer ${token}`);
      await new Promise((r) => setTimeout(r, 100));
      expect(await lastUsed()).toBe(first);
    });
  });

  describe('list, rename and remove', () => {
    it('lists the team’s keys newest first, in Resend’s shape', async () => {
      const a = await keys.create(otherTeam.id, { name: 'first' });
      const b = await keys.create(otherTeam.id, { name: 'second' });
      const list = await keys.list(otherTeam.id);
      expect(list.map((k) => k.id)).toEqual([b.id, a.id]);
      expect(list[0]).toEqual({ id: b.id, name: 'second', created_at: expect.stringMatching(REST_TIMESTAMP), last_used_at: null });
      expect((await keys.list(team.id)).map((k) => k.id)).not.toContain(a.id);
    });

    it('renames a key of the team', async () => {
      const { id } = await keys.create(team.id, { name: 'old' });
      await keys.rename(team.id, id, 'new');
      expect((await keys.list(team.id)).find((k) => k.id === id)?.name).toBe('new');
      await expect(keys.rename(team.id, id, 'x'.repeat(51))).rejects.toMatchObject({ code: 'validation_error' });
    });

    it('answers not_found for another team’s key or an unknown one, and leaves it alone', async () => {
      const { id, token } = await keys.create(otherTeam.id, { name: 'theirs' });
      await expect(keys.rename(team.id, id, 'mine')).rejects.toMatchObject({ code: 'not_found' });
      await expect(keys.remove(team.id, id)).rejects.toMatchObject({ code: 'not_found' });
      await expect(keys.remove(team.id, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'not_found' });
      await expect(keys.authenticate(`Bearer ${token}`)).resolves.toMatchObject({ teamId: otherTeam.id });
      expect((await keys.list(otherTeam.id)).find((k) => k.id === id)?.name).toBe('theirs');
    });

    it('answers invalid_parameter for an id that is not a UUID', async () => {
      await expect(keys.remove(team.id, 'nope')).rejects.toMatchObject({ code: 'invalid_parameter' });
      await expect(keys.rename(team.id, 'nope', 'x')).rejects.toMatchObject({ code: 'invalid_parameter' });
    });

    it('removes a key of the team', async () => {
      const { id } = await keys.create(team.id, { name: 'gone' });
      await keys.remove(team.id, id);
      expect((await keys.list(team.id)).map((k) => k.id)).not.toContain(id);
      await expect(keys.remove(team.id, id)).rejects.toMatchObject({ code: 'not_found' });
    });
  });
});
