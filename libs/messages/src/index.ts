export * from './email-record.types';
export * from './delivery-state.types';
export * from './email-events';
export { EmailStore, type AlongsideWrite } from './email.store';
export { EmailEventOutbox, toHeraldEvent } from './email-event-outbox';
export { Dispatcher } from './dispatcher.service';
export { DispatchReconciler } from './dispatch-reconciler.service';
export * from './messages.module';
