export * from './error-mapping';
export * from './herald-exception.filter';
export * from './configure-http';
