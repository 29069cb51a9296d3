import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainsRepository, DomainsService } from '@herald/domains';
import { GUARDRAIL_WINDOW_HOURS, type GuardrailLimits, judge } from './guardrail';
import { METRICS_CONFIG, type MetricsConfig } from './metrics.config';
import { hourOf } from './rollup-counts';
import { RollupsRepository } from './rollups.repository';

const HOUR_MS = 3_600_000;

/**
 * Pauses a domain whose last-24-hour bounce or complaint rate passes its limit (guardrail.ts).
 * The rollup consumer calls it after committing bounces or complaints of the domain, so the
 * send path never measures anything: it reads the pause from its cached domain row.
 */
@Injectable()
export class ReputationGuardrail {
  private readonly logger = new Logger(ReputationGuardrail.name);
  private readonly limits: GuardrailLimits;

  constructor(
    @Inject(METRICS_CONFIG.token) config: MetricsConfig,
    private readonly rollups: RollupsRepository,
    private readonly domainRows: DomainsRepository,
    private readonly domains: DomainsService,
  ) {
    this.limits = {
      bounceRate: config.METRICS_GUARDRAIL_BOUNCE_RATE,
      complaintRate: config.METRICS_GUARDRAIL_COMPLAINT_RATE,
      minSent: config.METRICS_GUARDRAIL_MIN_SENT,
    };
  }

  /** Judges the team's domain `name` now; answers whether this call paused it. */
  async check(teamId: string, name: string, now = new Date()): Promise<boolean> {
    const domain = await this.domainRows.findByName(teamId, name);
    if (!domain || domain.pausedAt) return false;
    let since = hourOf(new Date(now.getTime() - (GUARDRAIL_WINDOW_HOURS - 1) * HOUR_MS));
    // A resumed domain is judged on what it sent after the resume (from the next whole hour, the
    // rollups' grain), or the bounces that paused it would pause it again at once.
    if (domain.resumedAt) {
      const afterResume = new Date(hourOf(domain.resumedAt).getTime() + HOUR_MS);
      if (afterResume > since) since = afterResume;
    }
    const pause = judge(await this.rollups.domainTotals(teamId, domain.name, since), this.limits);
    if (!pause) return false;
    const paused = await this.domains.pause(teamId, domain.id, pause);
    if (paused) this.logger.warn(`paused ${domain.name} (team ${teamId}): ${pause.reason} ${pause.rate.toFixed(4)} over ${pause.threshold}`);
    return paused;
  }
}
