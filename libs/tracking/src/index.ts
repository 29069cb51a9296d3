export * from './tracking-token';
export * from './tracked-html';
export * from './tracking-links';
export * from './machine-classifier';
export * from './tracking.config';
export * from './tracking.service';
export * from './tracking.module';
