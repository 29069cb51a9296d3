export * from './herald-error';
export * from './time';
export * from './ids';
export * from './periodic-job';
export * from './address.parser';
export * from './group-commit';
export * from './address-policy';
export * from './debounced-batch';
