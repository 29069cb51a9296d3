import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Team } from './team.entity';

export const API_KEY_PERMISSIONS = ['full_access', 'sending_access'] as const;
export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];

/** Mirrors `api_keys` in the foundation migration. The token itself is never stored. */
@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'team_id', type: 'uuid' })
  teamId!: string;

  /** Loaded only by the authentication lookup, which needs the team alongside the key. */
  @ManyToOne(() => Team, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: Team;

  @Column({ name: 'name', type: 'text' })
  name!: string;

  @Column({ name: 'permission', type: 'text' })
  permission!: ApiKeyPermission;

  /** Restricts a sending_access key to one domain. No foreign key yet: domains come later. */
  @Column({ name: 'domain_id', type: 'uuid', nullable: true })
  domainId!: string | null;

  @Column({ name: 'public_id', type: 'text', unique: true })
  publicId!: string;

  /** SHA-256 of the whole token (see api-key-format.ts for why not a slow hash). */
  @Column({ name: 'secret_hash', type: 'bytea' })
  secretHash!: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;
}
