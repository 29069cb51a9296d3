import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiKeysService, type Principal } from '@herald/accounts';
import { addressDomain, addressKey, formatAddress, HeraldError, isHeraldError, isValidAddrSpec, type HeraldErrorCode } from '@herald/core';
import { SendingDomains } from '@herald/domains';
import { SendService, senderOf, type NormalizedEmail } from '@herald/emails';
import { EmailStore, type MimeUpload } from '@herald/messages';
import { validateIdempotencyKey } from '@herald/idempotency';
import { RateLimiter, rateLimitError, rateLimitFor } from '@herald/limits';
import { SuppressionCache } from '@herald/suppressions';
import { smtpReplyFor } from '../smtp-error-mapping';
import { SMTP_SUBMISSION_REPLIES as REPLIES, type SmtpReply } from '../smtp-replies';
import { SMTP_CONFIG, type SmtpConfig } from '../smtp.config';
import type { MessageSpool, SmtpEnvelope, SmtpSubmissionPort, SubmissionResult } from '../submission-port';
import { BodyDigest, boundaryOf } from './body-digest';
import { MimeSpool } from './mime-spool';
import {
  fieldValue,
  MAX_LINE_OCTETS,
  overlongHeaderLine,
  rewriteParts,
  rfc5322Date,
  splitMessage,
  type HeaderField,
  type SplitMessage,
} from './mime-headers';
import { relayHeaders, type Mailbox } from './relay-headers';

/** The SMTP username of every customer; the password is the API key. */
export const SMTP_USERNAME = 'herald';

const IDEMPOTENCY_HEADERS = ['herald-idempotency-key', 'resend-idempotency-key'];
/**
 * Removed from the stored message: Bcc would disclose the blind recipients, the idempotency keys
 * are Herald's business, and Return-Path is the receiving MX's to write (from Herald's VERP sender).
 */
const STRIPPED = new Set(['bcc', 'return-path', ...IDEMPOTENCY_HEADERS]);
/** Left out of the idempotency hash: a client that composes the message again on a retry changes them. */
const VOLATILE = new Set(['date', 'message-id', ...STRIPPED]);
const MESSAGE_ID = /^<[^<>\s@]+@[^<>\s@]+>$/;
/** What MAIL FROM refuses; any other failure there (the database, Redis) is a temporary failure of the check. */
const MAIL_FROM_REFUSALS = new Set<HeraldErrorCode>(['forbidden_from_domain', 'domain_paused', 'rate_limit_exceeded']);
/** Spooled chunks a process left behind when it died mid-DATA are looked for at most this often. */
const SWEEP_EVERY_MS = 60_000;

// Every reply comes from SMTP_SUBMISSION_REPLIES, or from smtpReplyFor for a HeraldError.
const refuse = (reply: SmtpReply): SubmissionResult => ({ ok: false, reply });
/** The reply to a HeraldError the SMTP map answers; anything else is rethrown (the relay answers 451 and logs it). */
function refusalOf(error: unknown): SmtpReply {
  const reply = isHeraldError(error) ? smtpReplyFor(error) : null;
  if (!reply) throw error;
  return reply;
}

/**
 * The SMTP relay's send path (SmtpSubmissionPort): the checks of each SMTP step, then the same
 * steps as POST /emails through SendService (idempotency, sending domain and region, quota,
 * persist with the MIME message in one statement, dispatch), with HeraldErrors as SMTP replies.
 */
@Injectable()
export class SmtpSubmissions implements SmtpSubmissionPort {
  private readonly logger = new Logger(SmtpSubmissions.name);
  private lastSweep = 0;

  constructor(
    @Inject(SMTP_CONFIG.token) private readonly config: SmtpConfig,
    private readonly apiKeys: ApiKeysService,
    private readonly rateLimiter: RateLimiter,
    private readonly suppressions: SuppressionCache,
    private readonly sendingDomains: SendingDomains,
    private readonly send: SendService,
    private readonly store: EmailStore,
  ) {}

  async authenticate(username: string, password: string): Promise<{ ok: true; principal: Principal } | { ok: false; reply: SmtpReply }> {
    try {
      if (username !== SMTP_USERNAME) throw new HeraldError('invalid_api_key', `The SMTP username is ${SMTP_USERNAME}, the password an API key`);
      return { ok: true, principal: await this.apiKeys.authenticateToken(password) };
    } catch (error) {
      const refusal = isHeraldError(error) ? smtpReplyFor(error) : null;
      if (refusal) return { ok: false, reply: refusal };
      this.logger.warn(`SMTP authentication failed: ${(error as Error).message}`);
      return { ok: false, reply: REPLIES.authTemporary };
    }
  }

  async checkMailFrom(principal: Principal, mailFrom: string): Promise<SmtpReply | null> {
    if (mailFrom.trim() === '') return REPLIES.nullSender;
    const problem = addressProblem(mailFrom);
    if (problem) return REPLIES.malformedSender(mailFrom, problem);
    try {
      await this.sendingDomains.resolve(principal.teamId, addressDomain(mailFrom), principal.domainId);
      const state = await this.rateLimiter.consume(principal.teamId, rateLimitFor(principal.team.plan, this.config, principal.team.rateLimit));
      if (!state.allowed) throw rateLimitError(state);
      return null;
    } catch (error) {
      const refusal = isHeraldError(error) && MAIL_FROM_REFUSALS.has(error.code) ? smtpReplyFor(error) : null;
      if (refusal) return refusal;
      this.logger.warn(`MAIL FROM check failed: ${(error as Error).message}`);
      return REPLIES.checkingSender;
    }
  }

  async checkRecipient(principal: Principal, address: string, accepted: number): Promise<SmtpReply | null> {
    const problem = addressProblem(address);
    if (problem) return REPLIES.malformedRecipient(address, problem);
    if (accepted >= this.config.MAX_RECIPIENTS) return REPLIES.tooManyRecipients;
    try {
      const suppressed = await this.suppressions.isSuppressed(principal.teamId, [address]);
      if (suppressed.size > 0) return REPLIES.suppressed(address);
      return null;
    } catch (error) {
      this.logger.warn(`RCPT TO check failed: ${(error as Error).message}`);
      return REPLIES.checkingRecipient;
    }
  }

  /**
   * The rest of a large message goes to Postgres as it arrives (MimeSpool); `head` holds its whole
   * header, so whether it has an idempotency key, and its MIME boundary, are known already.
   */
  spool(head: Buffer): MimeSpool {
    this.sweepUploads();
    const split = splitMessage(head);
    const keyed = split.fields.some((f) => IDEMPOTENCY_HEADERS.includes(f.name));
    return new MimeSpool(this.store, keyed ? bodyDigestOf(split).update(split.rest) : null);
  }

  /** At most once a minute, in the background: chunks older than any session lasts are a dead process's. */
  private sweepUploads(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    const seconds = Math.ceil(this.config.SMTP_SESSION_TIMEOUT_MS / 1000) + 60;
    void this.store.sweepMimeUploads(seconds).then(
      (n) => n > 0 && this.logger.log(`Deleted ${n} stored chunks of messages whose sessions ended without them`),
      (error: unknown) => this.logger.warn(`Sweeping stored message chunks failed: ${(error as Error).message}`),
    );
  }

  async submit(principal: Principal, envelope: SmtpEnvelope, raw: Buffer, spool?: MessageSpool): Promise<SubmissionResult> {
    if (spool && !(spool instanceof MimeSpool)) throw new Error('SmtpSubmissions.submit takes the spools of its own spool()');
    const size = raw.length + (spool?.bytes ?? 0);
    if (size > this.config.MAX_EMAIL_BYTES) return refuse(REPLIES.tooBig(this.config.MAX_EMAIL_BYTES));
    const rcptTo = unique(envelope.rcptTo);
    if (rcptTo.length === 0) return refuse(REPLIES.noRecipients);
    if (rcptTo.length > this.config.MAX_RECIPIENTS) return refuse(REPLIES.tooManyRecipients);

    const split = splitMessage(raw);
    // Herald sends the header as the client wrote it: a line no receiver has to accept is refused
    // here rather than folded, since folding a word would change it (RFC 2047 encoding is the client's choice).
    const overlong = overlongHeaderLine(split.fields);
    if (overlong) {
      const raw = overlong.field.raw;
      const name = raw.slice(0, Math.max(0, Math.min(raw.indexOf(':'), 64))).trim();
      const which = name ? ` (${name})` : '';
      return refuse(REPLIES.overlongHeader(overlong.octets, which, MAX_LINE_OCTETS));
    }
    let key: string | null;
    try {
      key = idempotencyKeyOf(split.fields);
    } catch (error) {
      return refuse(refusalOf(error));
    }

    // Only the header block is read: the body is stored and sent as the client wrote it.
    const headers = relayHeaders(split.fields);
    const from = headers.from;
    if (!from) return refuse(REPLIES.noFrom);

    const fromDomain = addressDomain(from.address);
    const keepId = headers.messageIds.length === 1 && MESSAGE_ID.test(headers.messageIds[0]);
    // A Message-ID Herald writes names the email, whose id the send path makes for the domain's region.
    const messageIdOf = (id: string) => (keepId ? headers.messageIds[0] : `<${id}@${fromDomain}>`);
    const date = headers.hasDate ? [] : [`Date: ${rfc5322Date(new Date())}`];
    // The header block rewritten, the body as received: the message is not copied (Postgres joins the two).
    const mimeOf = (id: string) =>
      rewriteParts(split, keepId ? STRIPPED : new Set([...STRIPPED, 'message-id']), [...(keepId ? [] : [`Message-ID: ${messageIdOf(id)}`]), ...date]);

    const { to, cc } = headers;
    const toKeys = new Set(to.map((a) => addressKey(a.address)));
    const ccKeys = new Set(cc.map((a) => addressKey(a.address)));
    // Bcc recipients are the envelope's that neither header names; without a To header, the
    // envelope recipients the Cc header does not name are the To recipients.
    const recipients = rcptTo.map((address) => {
      const k = addressKey(address);
      const kind = toKeys.has(k) ? 'to' : ccKeys.has(k) ? 'cc' : to.length ? 'bcc' : 'to';
      return { kind: kind as 'to' | 'cc' | 'bcc', address };
    });
    const email: NormalizedEmail = {
      from: formatAddress({ display: from.name || null, address: from.address }),
      fromAddress: from.address,
      fromDomain,
      to: to.length ? to.map(format) : recipients.filter((r) => r.kind === 'to').map((r) => r.address),
      cc: cc.map(format),
      bcc: recipients.filter((r) => r.kind === 'bcc').map((r) => r.address),
      replyTo: headers.replyTo.map(format),
      subject: headers.subject,
      // Not parsed here: GET /emails reads them from the stored MIME message (EmailStore).
      html: null,
      text: null,
      headers: null,
      attachments: [],
      tags: null,
      scheduledAt: null,
      recipients,
      // As received: the rewritten header differs by a line or two, and the size only paces the writer's commits.
      sizeBytes: size,
    };
    const body = !key ? null : spool ? spool.digest : bodyDigestOf(split).update(split.rest);
    const hash = body ? submissionHash(envelope, rcptTo, split, body.digest()) : '';

    let upload: MimeUpload | undefined;
    try {
      upload = await spool?.end();
    } catch (error) {
      this.logger.warn(`SMTP submission failed: storing the message: ${(error as Error).message}`);
      return refuse(REPLIES.storing);
    }
    try {
      const raw = (id: string) => ({ mime: mimeOf(id), messageId: messageIdOf(id), upload });
      const { id: accepted } = await this.send.sendMime(senderOf(principal), { email, raw, hash }, key);
      return { ok: true, id: accepted };
    } catch (error) {
      const refusal = isHeraldError(error) ? smtpReplyFor(error) : null;
      if (refusal) return refuse(refusal);
      this.logger.warn(`SMTP submission failed: ${(error as Error).message}`);
      return refuse(REPLIES.storing);
    }
  }
}

/**
 * Why an envelope address is refused, or null. Beyond syntax, the relay tricks that could make a
 * receiving MTA forward the message elsewhere: source routes, `%` and `!` routing in the local
 * part, quoted local parts (which could hide an `@`) and IP literals.
 */
export function addressProblem(address: string): string | null {
  const value = address.trim();
  if (/@\[[^\]]*\]$/.test(value)) return 'IP address literals are not accepted';
  if (value.startsWith('@') || /^[^"]*:/.test(value)) return 'source routes are not accepted';
  const at = value.lastIndexOf('@');
  if (at <= 0) return 'not an address';
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.startsWith('"') || local.includes('"')) return 'quoted local parts are not accepted';
  if (/[%!]/.test(local)) return '"%" and "!" routing is not accepted';
  if (domain.startsWith('[')) return 'IP address literals are not accepted';
  return isValidAddrSpec(value) ? null : 'not a valid address';
}

/** The idempotency key of the message, null when absent; by the rule of the API's Idempotency-Key (invalid_idempotency_key). */
function idempotencyKeyOf(fields: HeaderField[]): string | null {
  const values = fields.filter((f) => IDEMPOTENCY_HEADERS.includes(f.name)).map(fieldValue);
  return validateIdempotencyKey(values.length > 0 ? values : undefined);
}

const format = (a: Mailbox) => formatAddress({ display: a.name || null, address: a.address });

function unique(addresses: string[]): string[] {
  const seen = new Set<string>();
  return addresses.filter((a) => {
    const k = addressKey(a);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * "The same message" for idempotency: the envelope, the headers except the ones a client
 * regenerates when it composes the message again (Date, Message-ID) and the ones Herald strips,
 * and the body's bytes with its MIME boundaries counted by their order only (BodyDigest):
 * comparing bytes would make a retry from nodemailer (new boundaries, Date and Message-ID on
 * every send) a conflict. Nothing is decoded.
 */
function submissionHash(envelope: SmtpEnvelope, rcptTo: string[], split: SplitMessage, bodyDigest: Buffer): string {
  const hash = createHash('sha256');
  const part = (value: string) => hash.update(`${Buffer.byteLength(value)}:`).update(value);
  part(envelope.mailFrom.toLowerCase());
  part(rcptTo.map(addressKey).join(','));
  const contentType = split.fields.find((f) => f.name === 'content-type');
  const boundary = contentType ? boundaryOf(fieldValue(contentType)) : null;
  for (const field of split.fields) {
    if (VOLATILE.has(field.name)) continue;
    const value = fieldValue(field);
    part(`${field.name}:${field === contentType && boundary ? value.split(boundary).join('#0') : value}`);
  }
  hash.update(bodyDigest);
  return hash.digest('hex');
}

/** The body's digest, not fed yet, with the message's top-level MIME boundary. */
function bodyDigestOf(split: SplitMessage): BodyDigest {
  const contentType = split.fields.find((f) => f.name === 'content-type');
  return new BodyDigest(contentType ? boundaryOf(fieldValue(contentType)) : null);
}
