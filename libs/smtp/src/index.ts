export * from './smtp-replies';
export * from './smtp-error-mapping';
export * from './submission-port';
export * from './smtp-relay';
export * from './tls-certificate';
export * from './relay.host';
export * from './bounce-mx.host';
export * from './smtp-ingress.module';
