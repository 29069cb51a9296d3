import { ApiKeysService, TeamsService } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { isolatedConfig } from '@herald/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Resend } from 'resend';
import { startApi } from '../../apps/api/src/api.app';

/** A resource id: a UUID, version 7 (libs/core newId) or 4 (Resend's own). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface TestTeam {
  teamId: string;
  token: string;
  resend: Resend;
  /** A sending domain of the team's own, verified (its DNS checks are the domain suites' job). */
  domain: string;
  /** The id of that domain (for `sending_access` keys restricted to it). */
  domainId: string;
  /** An address on the team's domain: `from('hello')` → `hello@<domain>`. */
  from(local?: string): string;
}

export interface TestApi {
  url: string;
  config: HeraldConfig;
  /** The running API application, for what a suite drives by hand (the domain verifier). */
  app: NestFastifyApplication;
  /** A new team (free plan unless told) with a full-access key, and a Resend client for it. */
  team(input?: {
    plan?: string;
    rateLimit?: number | null;
    region?: string;
    permission?: string;
    domain?: string;
    domainRegion?: string;
  }): Promise<TestTeam>;
  /** Another key of an existing team. */
  key(teamId: string, permission?: string): Promise<string>;
  close(): Promise<void>;
}

/** The API role in this process on a random port, on an isolated schema, Redis prefix and NATS namespace. */
export async function startTestApi(overrides: Record<string, string> = {}): Promise<TestApi> {
  const isolated = await isolatedConfig(overrides);
  const { app, url, close } = await startApi(isolated.config);
  const teams = app.get(TeamsService);
  const keys = app.get(ApiKeysService);
  const domains = app.get(DomainsService);
  const repository = app.get(DomainsRepository);
  let teamCount = 0;
  const key = async (teamId: string, permission = 'full_access') => (await keys.create(teamId, { name: `test ${permission}`, permission })).token;
  return {
    url,
    config: isolated.config,
    app,
    key,
    async team(input = {}) {
      const team = await teams.create({
        name: 'Test team',
        plan: input.plan,
        rateLimit: input.rateLimit === undefined ? 10_000 : input.rateLimit,
        region: input.region,
      });
      const token = await key(team.id, input.permission);
      const requested = input.domain ?? `team${++teamCount}.acme.test`;
      const created = await domains.create({ teamId: team.id, homeRegion: team.homeRegion }, { name: requested, region: input.domainRegion });
      const domain = created.name;
      await markVerified(repository, created.id);
      return {
        teamId: team.id,
        token,
        resend: new Resend(token, { baseUrl: url }),
        domain,
        domainId: created.id,
        from: (local = 'hello') => `${local}@${domain}`,
      };
    },
    async close() {
      await close();
      await isolated.cleanup();
    },
  };
}

/** Marks a domain and its records verified, as if its DNS checked out (the domain suites test the checks). */
export async function markVerified(repository: DomainsRepository, domainId: string): Promise<void> {
  await repository.saveVerification(domainId, {
    status: 'verified',
    records: (await repository.getById(domainId))!.records.map((r) => ({ ...r, status: 'verified' as const })),
    dmarc: null,
    dkimStatuses: {},
    verifiedAt: new Date(),
    nextCheckAt: null,
  });
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
