export * from './outbox';
export * from './outbox.tuning';
export { ResourceEventOutbox } from './resource-events/resource-event-outbox';
export { ResourceEventsModule } from './resource-events/resource-events.module';
