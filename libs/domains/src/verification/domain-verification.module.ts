import { DynamicModule, Module, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { DOMAINS_CONFIG } from '../domains.config';
import { DomainsRepository } from '../domains.repository';
import { DomainChecksRepository } from './domain-checks.repository';
import { DmarcInspector } from './dmarc';
import { DnsResolver } from './dns-resolver';
import { DOMAIN_STATUS_LISTENER, DomainStatusListener } from './domain-status.listener';
import { DomainVerifier } from './domain-verifier.service';
import { RecordChecker } from './record-checker';
import { VerificationScheduler } from './verification-scheduler.service';

export interface DomainVerificationOptions {
  /** Modules that provide the listener (e.g. the DomainsModule). */
  imports?: ModuleMetadata['imports'];
  /** The provider (class or token) to tell about status changes and checked DKIM keys. */
  listener?: Type<DomainStatusListener> | string | symbol;
  /** Run the periodic scheduler (default); false for one-shot use such as the CLI. */
  scheduler?: boolean;
}

/**
 * Domain verification: the DNS resolver, record checks, DMARC report, the verifier and (unless
 * told otherwise) the scheduler that rechecks due domains. Relies on the app importing
 * ConfigModule and DatabaseModule. It does not import the domains service: the service listens
 * through DOMAIN_STATUS_LISTENER instead, so there is no cycle.
 */
@Module({})
export class DomainVerificationModule {
  static forRoot(options: DomainVerificationOptions = {}): DynamicModule {
    const listener: Provider[] = options.listener ? [{ provide: DOMAIN_STATUS_LISTENER, useExisting: options.listener }] : [];
    const scheduler = options.scheduler === false ? [] : [VerificationScheduler];
    return {
      module: DomainVerificationModule,
      imports: options.imports ?? [],
      providers: [
        DOMAINS_CONFIG.provider,
        DomainsRepository,
        DomainChecksRepository,
        DnsResolver,
        RecordChecker,
        DmarcInspector,
        DomainVerifier,
        ...scheduler,
        ...listener,
      ],
      exports: [DomainVerifier, DnsResolver, ...scheduler],
    };
  }
}
