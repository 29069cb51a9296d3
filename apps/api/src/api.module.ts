import { DynamicModule, Module } from '@nestjs/common';
import { AccountsModule } from '@herald/accounts';
import { HeraldConfig } from '@herald/config';
import { DispatchReconcilerModule, EmailsModule } from '@herald/emails';
import { IdempotencyPurgerModule } from '@herald/idempotency';
import { LimitsModule } from '@herald/limits';
import { LoggingOptions, ObservabilityHttpModule } from '@herald/observability';
import { RuntimeModule } from '@herald/runtime';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { ApiKeyGuard } from './auth/api-key.guard';
import { EmailsController } from './emails/emails.controller';

/** The REST API role: Resend-compatible endpoints, plus the dispatch reconciler of its region. */
@Module({})
export class ApiModule {
  static forConfig(config: HeraldConfig, logging: LoggingOptions = {}): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        RuntimeModule.forRole('api', config, logging),
        ObservabilityHttpModule,
        AccountsModule,
        LimitsModule,
        EmailsModule,
        DispatchReconcilerModule,
        IdempotencyPurgerModule,
      ],
      controllers: [EmailsController, ApiKeysController],
      providers: [ApiKeyGuard],
    };
  }
}
