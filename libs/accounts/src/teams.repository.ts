import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Team } from './team.entity';

export interface NewTeam {
  id: string;
  name: string;
  homeRegion: string;
  plan: string;
  rateLimit: number | null;
}

/** The only place that knows teams live in TypeORM. */
@Injectable()
export class TeamsRepository {
  constructor(@InjectRepository(Team) private readonly teams: Repository<Team>) {}

  async create(fields: NewTeam): Promise<Team> {
    const team = this.teams.create(fields);
    // insert, not save: save would first SELECT to decide between insert and update.
    await this.teams.insert(team);
    return team;
  }

  get(teamId: string): Promise<Team | null> {
    return this.teams.findOneBy({ id: teamId });
  }

  /** The oldest team with this name (names are not unique; operators use this for dev setups). */
  findByName(name: string): Promise<Team | null> {
    return this.teams.findOne({ where: { name }, order: { createdAt: 'ASC' } });
  }
}
