import { ApiKeysService, TeamsService } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { isolatedConfig } from '@herald/testing';
import { Resend } from 'resend';
import { startApi } from '../../apps/api/src/api.app';

export interface TestTeam {
  teamId: string;
  token: string;
  resend: Resend;
}

export interface TestApi {
  url: string;
  config: HeraldConfig;
  /** A new team (free plan unless told) with a full-access key, and a Resend client for it. */
  team(input?: { plan?: string; rateLimit?: number | null; region?: string; permission?: string }): Promise<TestTeam>;
  /** Another key of an existing team. */
  key(teamId: string, permission?: string): Promise<string>;
  close(): Promise<void>;
}

/** The API role in this process on a random port, on an isolated schema, Redis prefix and NATS namespace. */
export async function startTestApi(overrides: Record<string, string> = {}): Promise<TestApi> {
  const isolated = await isolatedConfig(overrides);
  const { app, url } = await startApi(isolated.config);
  const teams = app.get(TeamsService);
  const keys = app.get(ApiKeysService);
  const key = async (teamId: string, permission = 'full_access') =>
    (await keys.create(teamId, { name: `test ${permission}`, permission })).token;
  return {
    url,
    config: isolated.config,
    key,
    async team(input = {}) {
      const team = await teams.create({ name: 'Test team', plan: input.plan, rateLimit: input.rateLimit === undefined ? 10_000 : input.rateLimit, region: input.region });
      const token = await key(team.id, input.permission);
      return { teamId: team.id, token, resend: new Resend(token, { baseUrl: url }) };
    },
    async close() {
      await app.close();
      await isolated.cleanup();
    },
  };
}

/** A raw request, for what the SDK hides (status codes, headers). */
export async function call(
  url: string,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}
