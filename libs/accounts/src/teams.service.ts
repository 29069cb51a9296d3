import { Inject, Injectable } from '@nestjs/common';
import { HeraldError, isUuid, newId } from '@herald/core';
import { isPlanId, PLAN_IDS, PlanId } from '@herald/limits';
import { requiredName } from './account-input.validation';
import { ACCOUNTS_CONFIG, type AccountsConfig } from './accounts.config';
import { Team } from './team.entity';
import { TeamsRepository } from './teams.repository';

export interface CreateTeamInput {
  name: string;
  region?: string;
  plan?: string;
  /** Requests per second for the whole team; omitted or null means the plan's default. */
  rateLimit?: number | null;
}

/** Resend's default region, used for a new team when this deployment offers it. */
const PREFERRED_HOME_REGION = 'us-east-1';
const DEFAULT_PLAN: PlanId = 'free';
const MAX_TEAM_NAME = 100;
/** The column is a Postgres integer. */
const MAX_RATE_LIMIT = 2_147_483_647;

@Injectable()
export class TeamsService {
  constructor(
    @Inject(ACCOUNTS_CONFIG.token) private readonly config: AccountsConfig,
    private readonly teams: TeamsRepository,
  ) {}

  async create(input: CreateTeamInput): Promise<Team> {
    return this.teams.create({
      id: newId(),
      name: requiredName(input.name, MAX_TEAM_NAME),
      homeRegion: this.homeRegion(input.region),
      plan: plan(input.plan),
      rateLimit: rateLimit(input.rateLimit),
    });
  }

  async get(teamId: string): Promise<Team> {
    const team = isUuid(teamId) ? await this.teams.get(teamId) : null;
    if (!team) throw new HeraldError('not_found', 'Team not found');
    return team;
  }

  findByName(name: string): Promise<Team | null> {
    return this.teams.findByName(name);
  }

  private homeRegion(region: unknown): string {
    const regions = this.config.HERALD_REGIONS;
    if (region === undefined || region === null) {
      return regions.includes(PREFERRED_HOME_REGION) ? PREFERRED_HOME_REGION : regions[0]!;
    }
    if (typeof region !== 'string' || !regions.includes(region)) {
      throw new HeraldError('invalid_region', `The \`region\` field must be one of: ${regions.join(', ')}.`);
    }
    return region;
  }
}

function plan(value: unknown): PlanId {
  if (value === undefined || value === null) return DEFAULT_PLAN;
  if (!isPlanId(value)) {
    throw new HeraldError('validation_error', `The \`plan\` field must be one of: ${PLAN_IDS.join(', ')}.`);
  }
  return value;
}

function rateLimit(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_RATE_LIMIT) {
    throw new HeraldError('validation_error', 'The `rateLimit` field must be a positive integer.');
  }
  return value;
}
