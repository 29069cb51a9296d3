import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ACCOUNTS_CONFIG } from './accounts.config';
import { ApiKey } from './api-key.entity';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { Team } from './team.entity';
import { TeamsRepository } from './teams.repository';
import { TeamsService } from './teams.service';

/**
 * Teams and API keys. The application imports ConfigModule and DatabaseModule once; this module
 * only registers its entities and keeps its repositories private.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Team, ApiKey])],
  providers: [ACCOUNTS_CONFIG.provider, TeamsRepository, ApiKeysRepository, TeamsService, ApiKeysService],
  exports: [TeamsService, ApiKeysService],
})
export class AccountsModule {}
