export * from './message-builder';
export * from './message-build-error';
export * from './dkim-signer';
export * from './verp';
export * from './mime-html';
