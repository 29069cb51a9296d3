export * from './error-mapping';
export * from './herald-exception.filter';
export * from './configure-http';
export * from './json-body.parser';
export * from './server-options';
export * from './page-query';
export * from './zod-issue.mapper';
export * from './wire.schemas';
