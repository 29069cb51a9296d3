export * from './domain.types';
export { pauseMessage } from './domain-pause';
export * from './domains.repository';
export * from './domains.module';
export * from './domains.service';
export * from './sending-domains.service';
export * from './domain-events';
export * from './domain-verification.listener';
export * from './domain.presenter';
export * from './dkim-rotation';
export {
  decryptPrivateKey,
  dkimEncryptionKey,
  dkimKeyType,
  dkimRecordValue,
  encryptPrivateKey,
  generateDkimKey,
  newSelector,
  publicKeySpki,
  RSA_MODULUS_BITS,
  type GeneratedDkimKey,
} from './dkim-key.crypto';
export {
  buildDnsRecords,
  carryVerification,
  DMARC_RECORD_VALUE,
  regionBounceHost,
  regionSpfMechanisms,
  trackingHost,
  type MailHostsConfig,
} from './dns-records.builder';
export {
  asciiDomainName,
  createDomainBody,
  updateDomainBody,
  validateCreateDomain,
  validateUpdateDomain,
  type CreateDomainInput,
  type UpdateDomainInput,
} from './domain-input.validation';
export { validateDomainListQuery } from './domain-query.validation';
export * from './verification';
