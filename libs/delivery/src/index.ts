export * from './delivery.types';
export * from './bounce-classification';
export * from './delivery.module';
export * from './engine/delivery.service';
export * from './engine/transmitter.provider';
export { deliveryHostname } from './delivery.config';
export * from './engine/test-addresses';
export * from './engine/late-reports';
// What the bounce MX of @herald/smtp asks of delivery: is a recipient one of our VERP addresses, is a message a report.
export { parseReport, type ParsedReport } from './bounce';
export { parseReturnPath, returnPathAddress, verpKey } from './message';
