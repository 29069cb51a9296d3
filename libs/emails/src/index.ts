export * from './email.types';
export * from './emails.module';
export * from './send.service';
export * from './emails.service';
export * from './validation';
