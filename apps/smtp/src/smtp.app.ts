import { INestApplicationContext } from '@nestjs/common';
import { HeraldConfig } from '@herald/config';
import { LoggingOptions } from '@herald/observability';
import { startRoleContext } from '@herald/runtime';
import { SmtpModule } from './smtp.module';

/** Starts the smtp role: an application context whose relay and bounce MX listen at bootstrap. */
export function startSmtp(config: HeraldConfig, logging: LoggingOptions = {}): Promise<INestApplicationContext> {
  return startRoleContext('smtp', config, logging, (roleLogging) => SmtpModule.forConfig(config, roleLogging));
}
