export * from './email.types';
export * from './email.presenter';
export * from './emails.module';
export * from './send.service';
export * from './emails.service';
export * from './validation';
export { sendLimitsOf } from './emails.config';
