export * from './dns-resolver';
export * from './record-checker';
export * from './dmarc';
export * from './domain-status.listener';
export * from './domain-verifier.service';
export * from './verification-scheduler.service';
export * from './domain-verification.module';
export { absentStatus, decideStatus, nextCheckDelayMs, type StatusFacts } from './verification-policy';
