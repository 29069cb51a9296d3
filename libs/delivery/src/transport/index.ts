export { SmtpTransmitter, type TransmitterOptions, type TransmitterLogger } from './smtp-transmitter';
export { MxResolver, type MxHost, type MxResolution, type MxResolverOptions } from './mx-resolver';
