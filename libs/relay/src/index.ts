export * from './smtp-relay';
export * from './relay.host';
export * from './tls-certificate';
