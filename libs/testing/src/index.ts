export * from './test-config';
export * from './cleanup';
export * from './dns-server';
