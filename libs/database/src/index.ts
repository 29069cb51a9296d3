export * from './data-source';
export * from './database.module';
export * from './keyset-page';
