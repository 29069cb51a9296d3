import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A tenant: everything a customer owns hangs off a team. Mirrors `teams` in the foundation
 * migration column for column; the schema changes only through migrations.
 */
@Entity({ name: 'teams' })
export class Team {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'name', type: 'text' })
  name!: string;

  /** Where the team's domains default to; the place its mail is sent from unless a domain says otherwise. */
  @Column({ name: 'home_region', type: 'text' })
  homeRegion!: string;

  @Column({ name: 'plan', type: 'text' })
  plan!: string;

  /** Requests per second for the whole team; null means the plan's default applies. */
  @Column({ name: 'rate_limit', type: 'integer', nullable: true })
  rateLimit!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
