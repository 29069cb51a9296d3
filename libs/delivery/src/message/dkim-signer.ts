import { createPrivateKey } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import DKIM from 'nodemailer/lib/dkim';

export interface DkimSigningKey {
  /** The d= domain: the sending domain, so DMARC aligns with From. */
  domainName: string;
  selector: string;
  /** PEM. */
  privateKey: string;
}

/**
 * The headers the signature covers, when present. Enough to stop anyone from replaying the
 * signed bytes with another sender, recipient, subject or body structure; List-Unsubscribe-Post
 * must be covered for RFC 8058 one-click unsubscribe to be honoured.
 */
const SIGNED_HEADERS = [
  'From',
  'To',
  'Cc',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
].join(':');

const SIGNATURE_PREFIX = Buffer.from('DKIM-Signature:');
const FROM_HEADER = /^from:/im;

const headerSection = (message: Buffer): string => {
  const end = message.indexOf('\r\n\r\n');
  return message.subarray(0, end === -1 ? message.length : end).toString('latin1');
};

/**
 * The message with a DKIM-Signature header prepended (relaxed/relaxed, rsa-sha256). Meant to run
 * once per email: the engine sends the same signed bytes to every recipient domain.
 *
 * nodemailer's signer is stream based and, when the key is unusable, silently emits the message
 * unsigned; an unsigned message would fail DMARC, so that case is turned into an error here.
 */
export async function signDkim(message: Buffer, key: DkimSigningKey): Promise<Buffer> {
  assertUsableKey(key);
  // nodemailer signs only the listed headers that are present; DMARC needs From covered.
  if (!FROM_HEADER.test(headerSection(message))) throw new Error('Cannot DKIM-sign a message without a From header.');
  const dkim = new DKIM({
    domainName: key.domainName,
    keySelector: key.selector,
    privateKey: key.privateKey,
    headerFieldNames: SIGNED_HEADERS,
  });
  const signed = await buffer(dkim.sign(message));
  if (!signed.subarray(0, SIGNATURE_PREFIX.length).equals(SIGNATURE_PREFIX)) {
    throw new Error(`DKIM signing for ${key.domainName} produced no signature.`);
  }
  return signed;
}

function assertUsableKey(key: DkimSigningKey): void {
  try {
    createPrivateKey(key.privateKey);
  } catch (error) {
    throw new Error(`The DKIM key of ${key.domainName} (selector ${key.selector}) is not a usable private key.`, { cause: error });
  }
}
