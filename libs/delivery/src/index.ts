export * from './delivery.types';
export * from './bounce-classification';
export * from './delivery.module';
export * from './engine/delivery.service';
export * from './engine/transmitter.provider';
export * from './engine/test-addresses';
export * from './engine/late-reports';
export { BounceMx, type ReceivedReport } from './bounce';
export { verpKey } from './message';
