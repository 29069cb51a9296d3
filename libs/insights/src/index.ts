export * from './insight.types';
export * from './insights.module';
export * from './insights.service';
export { insightListSchema, insightSchema, presentInsights, type InsightList } from './insights.presenter';
export { scanMessage, type MessageScan } from './message-scan';
export { CONTENT_RULES, OUTCOME_RULES, evaluate, ordered } from './rules';
