import { Module } from '@nestjs/common';
import { ResourceEventsModule } from '@herald/outbox';
import { SendingDomains } from './sending-domains.service';
import { DomainEvents } from './domain-events';
import { DomainVerificationListener } from './domain-verification.listener';
import { DOMAINS_CONFIG } from './domains.config';
import { DomainsRepository } from './domains.repository';
import { DomainsService } from './domains.service';
import { DmarcInspector } from './verification/dmarc';
import { DnsResolver } from './verification/dns-resolver';

/**
 * The domains context: sending domains, their DKIM keys and DNS records. Relies on the app
 * importing ConfigModule, DatabaseModule and BusModule (for the domain.* events, which go
 * through the resource event outbox). Roles that run the verifier pass DomainVerificationListener
 * to DomainVerificationModule.forRoot.
 */
@Module({
  imports: [ResourceEventsModule],
  providers: [
    DOMAINS_CONFIG.provider,
    DomainsRepository,
    DomainEvents,
    DomainsService,
    DomainVerificationListener,
    SendingDomains,
    DnsResolver,
    DmarcInspector,
  ],
  exports: [DomainsRepository, DomainEvents, DomainsService, DomainVerificationListener, SendingDomains, DmarcInspector],
})
export class DomainsModule {}
