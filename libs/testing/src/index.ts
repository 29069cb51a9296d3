export * from './test-config';
export * from './cleanup';
