import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiKey, ApiKeyPermission } from './api-key.entity';

export interface NewApiKey {
  id: string;
  name: string;
  permission: ApiKeyPermission;
  domainId: string | null;
  publicId: string;
  secretHash: Buffer;
}

/** An API key together with its team, as authentication needs it. */
export type ApiKeyWithTeam = ApiKey & { team: NonNullable<ApiKey['team']> };

/**
 * The only place that knows API keys live in TypeORM. Every method but getByPublicId takes the
 * team first; getByPublicId is how a request finds its team in the first place.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

  async create(teamId: string, fields: NewApiKey): Promise<ApiKey> {
    const key = this.keys.create({ ...fields, teamId, lastUsedAt: null });
    await this.keys.insert(key);
    return key;
  }

  /**
   * Whether the team has this domain. A plain query rather than the domains context's
   * repository, so that accounts does not depend on domains (which may come to depend on it).
   */
  async teamHasDomain(teamId: string, domainId: string): Promise<boolean> {
    const rows: unknown[] = await this.keys.query('SELECT 1 FROM domains WHERE team_id = $1 AND id = $2', [teamId, domainId]);
    return rows.length > 0;
  }

  /** Newest first; the id breaks ties so the order is stable. */
  listByTeam(teamId: string): Promise<ApiKey[]> {
    return this.keys.find({ where: { teamId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  async getByPublicId(publicId: string): Promise<ApiKeyWithTeam | null> {
    const key = await this.keys.findOne({ where: { publicId }, relations: { team: true } });
    return key?.team ? (key as ApiKeyWithTeam) : null;
  }

  /** False when the team has no such key. */
  async rename(teamId: string, id: string, name: string): Promise<boolean> {
    const result = await this.keys.update({ teamId, id }, { name });
    return (result.affected ?? 0) > 0;
  }

  /** Returns the deleted key's public id (so caches can drop it), or null when there was none. */
  async delete(teamId: string, id: string): Promise<{ publicId: string } | null> {
    const result = await this.keys
      .createQueryBuilder()
      .delete()
      .from(ApiKey)
      .where({ teamId, id })
      // A raw column list: the array form takes property paths and silently drops unknown ones.
      .returning('public_id')
      .execute();
    const rows = result.raw as Array<{ public_id: string }>;
    return rows[0] ? { publicId: rows[0].public_id } : null;
  }

  /** Never moves last_used_at backwards, so late or concurrent writes from other processes are harmless. */
  async touchLastUsed(teamId: string, id: string, at: Date): Promise<void> {
    await this.keys
      .createQueryBuilder()
      .update(ApiKey)
      .set({ lastUsedAt: at })
      .where('team_id = :teamId AND id = :id', { teamId, id })
      .andWhere('(last_used_at IS NULL OR last_used_at < :at)', { at })
      .execute();
  }
}
