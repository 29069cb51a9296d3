export * from './config.schema';
export * from './load-config';
export * from './config.module';
export * from './config-slice';
export { regionIdCode } from './config-fields';
