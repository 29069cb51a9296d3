export * from './metrics.module';
export * from './rollups.module';
export { RollupsService } from './rollups.service';
export { ReputationGuardrail } from './reputation-guardrail.service';
export { StatsService } from './stats.service';
export { statsSchema, statsBucketSchema, type StatsBody } from './stats.presenter';
export { COUNTERS, countEvent, fromDomainOf, type Counts, type StreamedEvent } from './rollup-counts';
export { bounceRate, complaintRate, deliveryRate, judge, GUARDRAIL_WINDOW_HOURS } from './guardrail';
