export * from './runtime.module';
