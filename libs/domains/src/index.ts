export * from './domain.types';
export * from './domains.repository';
