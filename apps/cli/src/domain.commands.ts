import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BusModule } from '@herald/bus';
import { ConfigModule, HeraldConfig } from '@herald/config';
import { HeraldError, restTimestamp } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import {
  DomainsModule,
  DomainVerificationListener,
  DomainVerificationModule,
  DomainVerifier,
  recordHost,
  VerificationOutcome,
} from '@herald/domains';
import { UsageError } from './args';

/** As in the API role: a change is announced (`domain.updated`) and verified DKIM keys move along. */
@Module({
  imports: [
    DatabaseModule,
    BusModule,
    DomainVerificationModule.forRoot({ imports: [DomainsModule], listener: DomainVerificationListener, scheduler: false }),
  ],
})
class DomainCliModule {}

/**
 * `herald domain verify NAME [--dry-run]`: checks the domain's DNS records now, whoever owns it,
 * saves the result as the API's verifier would (status, next check, `domain.updated` on a
 * change) and prints what each record should be and what DNS answered. `--dry-run` saves nothing.
 */
export async function verifyDomain(config: HeraldConfig, name: string | undefined, flags: Record<string, string>) {
  // `--dry-run NAME` reads NAME as the flag's value; take it back as the name.
  const dryRunFlag = flags['dry-run'];
  const dryRun = dryRunFlag !== undefined && dryRunFlag !== 'false';
  name ??= dryRunFlag !== undefined && !['true', 'false'].includes(dryRunFlag) ? dryRunFlag : undefined;
  if (!name) throw new UsageError('domain verify needs a domain name');
  const app = await NestFactory.createApplicationContext({ module: DomainCliModule, imports: [ConfigModule.forRoot(config)] }, { logger: false });
  try {
    const verifier = app.get(DomainVerifier);
    const domain = await verifier.findByName(name);
    if (!domain) throw new HeraldError('not_found', `Domain ${name} not found`);
    return present(await (dryRun ? verifier.inspect(domain.id) : verifier.verify(domain.id)), dryRun);
  } finally {
    await app.close();
  }
}

function present(outcome: VerificationOutcome, dryRun: boolean) {
  const { domain, dmarc } = outcome;
  return {
    object: 'domain_verification',
    domain: domain.name,
    id: domain.id,
    team_id: domain.teamId,
    region: domain.region,
    status: outcome.status,
    previous_status: outcome.previousStatus,
    saved: !dryRun,
    checked_at: restTimestamp(outcome.checkedAt),
    next_check_at: dryRun ? null : restTimestamp(outcome.nextCheckAt),
    records: outcome.records.map((r) => ({
      record: r.record,
      name: r.name,
      host: recordHost(r, domain.name),
      type: r.type,
      expected: r.value,
      ...(r.priority !== undefined && { priority: r.priority }),
      required: r.required,
      status: r.status,
      observed: r.observed ?? [],
      problem: r.problem ?? null,
    })),
    dmarc: dmarc && {
      present: dmarc.present,
      record: dmarc.record,
      policy: dmarc.policy,
      dkim_aligned: dmarc.dkimAligned,
      spf_aligned: dmarc.spfAligned,
    },
  };
}
