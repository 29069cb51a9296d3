export * from './data-source';
export * from './database.module';
export * from './keyset-page';
export * from './postgres.health';
export * from './transaction';
export * from './postgres-unavailable';
export * from './clock-sync';
export { migrations } from './migrations';
export * from './planes';
