export * from './email.types';
export * from './emails.module';
export * from './send.service';
export * from './emails.service';
export * from './validation';
export * from './smtp/smtp-submission.types';
export * from './smtp/smtp-submissions.service';
export * from './smtp/smtp-submission.module';
