import { Inject, Injectable } from '@nestjs/common';
import { HeraldError } from '@herald/core';
import { DomainsRepository } from '@herald/domains';
import { METRICS_CONFIG, type MetricsConfig } from './metrics.config';
import { COUNTERS, type Counts, zeroCounts } from './rollup-counts';
import { RollupsRepository } from './rollups.repository';
import { bucketMs, validateStatsQuery } from './stats.query';
import { presentStats, type StatsBody } from './stats.presenter';

/** GET /stats and the dashboard's Metrics page: one team's rollups over a range. */
@Injectable()
export class StatsService {
  constructor(
    @Inject(METRICS_CONFIG.token) private readonly config: MetricsConfig,
    private readonly rollups: RollupsRepository,
    private readonly domains: DomainsRepository,
  ) {}

  async stats(teamId: string, query: unknown): Promise<StatsBody> {
    const q = validateStatsQuery(query, this.config.HERALD_REGIONS);
    let domain: string | null = null;
    if (q.domainId) {
      const found = await this.domains.get(teamId, q.domainId);
      if (!found) throw new HeraldError('not_found', 'Domain not found');
      domain = found.name;
    }
    const rows = await this.rollups.series({ teamId, from: q.from, to: q.to, granularity: q.granularity, domain, region: q.region });
    const byStart = new Map(rows.map((r) => [r.bucket.getTime(), r.counts]));
    const step = bucketMs(q.granularity);
    const buckets: { start: Date; counts: Counts }[] = [];
    const totals = zeroCounts();
    const none = zeroCounts();
    for (let at = q.from.getTime(); at < q.to.getTime(); at += step) {
      const counts = byStart.get(at);
      if (counts) for (const c of COUNTERS) totals[c] += counts[c];
      buckets.push({ start: new Date(at), counts: counts ?? none });
    }
    const range = {
      from: q.from.toISOString(),
      to: q.to.toISOString(),
      granularity: q.granularity,
      domain_id: q.domainId,
      region: q.region,
    };
    return presentStats(range, buckets, totals);
  }
}
