export * from './suppression.types';
export * from './suppressions.repository';
export * from './suppressions.module';
export * from './suppressions.service';
export * from './suppression-events';
export * from './suppression.presenter';
export * from './suppression-input.validation';
export * from './suppression-cache';
