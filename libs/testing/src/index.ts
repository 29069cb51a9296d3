export * from './test-config';
export * from './cleanup';
export * from './dns-server';
export * from './mx-sink';
export * from './eventually';
export * from './private-redis';
export * from './raw-smtp-client';
