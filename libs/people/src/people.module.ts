import { Inject, Logger, Module, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { AccountsModule } from '@herald/accounts';
import { guardConnection } from '@herald/database';
import { DomainsModule } from '@herald/domains';
import { EmailsModule } from '@herald/emails';
import { AuditLogRepository } from './audit-log.repository';
import { AUTH_DATABASE, DashboardAuth } from './dashboard-auth.service';
import { InvitationsRepository } from './invitations.repository';
import { MembersRepository } from './members.repository';
import { PEOPLE_CONFIG, type PeopleConfig } from './people.config';
import { PeopleService } from './people.service';
import { SignInLimiter } from './sign-in-limiter';
import { SystemMailer } from './system-mailer.service';

/** better-auth's own connections (its Kysely adapter speaks to a pg Pool), on Herald's schema. */
const authDatabase = {
  provide: AUTH_DATABASE,
  inject: [PEOPLE_CONFIG.token],
  useFactory: (config: PeopleConfig) => {
    const pool = new Pool({
      // Users, sessions and teams are the control plane's (libs/database planes.ts).
      connectionString: config.CONTROL_DATABASE_URL ?? config.DATABASE_URL,
      max: 5,
      options: `-c search_path=${config.DATABASE_SCHEMA}`,
      application_name: 'herald-auth',
      onConnect: guardConnection,
    });
    // An idle connection that Postgres drops (a restart, a failover) is reported here; without a
    // listener the 'error' event would end the process. The pool replaces the connection on next use.
    const logger = new Logger('DashboardAuth');
    pool.on('error', (error) => logger.warn(`an idle dashboard-auth connection to Postgres failed: ${error.message}`));
    return pool;
  },
};

class AuthDatabaseCloser implements OnModuleDestroy {
  constructor(@Inject(AUTH_DATABASE) private readonly pool: Pool) {}

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * The people of the dashboard: users and sessions (better-auth), team membership and roles,
 * invitations, the audit log, and the mail the dashboard sends through Herald itself. Needs the
 * app's ConfigModule, DatabaseModule, RedisModule and BusModule.
 */
@Module({
  imports: [AccountsModule, DomainsModule, EmailsModule],
  providers: [
    PEOPLE_CONFIG.provider,
    authDatabase,
    AuthDatabaseCloser,
    MembersRepository,
    InvitationsRepository,
    AuditLogRepository,
    SystemMailer,
    PeopleService,
    SignInLimiter,
    DashboardAuth,
  ],
  exports: [PeopleService, DashboardAuth, SignInLimiter, SystemMailer],
})
export class PeopleModule {}
