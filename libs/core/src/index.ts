export * from './herald-error';
export * from './time';
export * from './ids';
