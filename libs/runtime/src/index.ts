export * from './runtime.module';
export * from './roles';
export * from './role.boot';
