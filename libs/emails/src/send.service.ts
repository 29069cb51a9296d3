import { Inject, Injectable } from '@nestjs/common';
import { RegionAvailability } from '@herald/bus';
import { HeraldError, isHeraldError, newRegionalId } from '@herald/core';
import { SendingDomains } from '@herald/domains';
import { IdempotencyRecords, IdempotencyService, isIdempotencyConflict, Lease, Replay } from '@herald/idempotency';
import { QuotaService, Reservation } from '@herald/limits';
import { Dispatcher, EmailEventOutbox, EmailStore, type EmailEventRecord } from '@herald/messages';
import { MetricsService } from '@herald/observability';
import { EMAILS_CONFIG, EmailsConfig, sendLimitsOf } from './emails.config';
import { EmailWriter } from './email-writer';
import type { BatchResponse, SendResponse } from './email.presenter';
import type { AcceptedEmail, EmailSource, Sender } from './email.types';
import { NormalizedEmail, SendLimits, Validated, requestHash, validateBatchRequest, validateSendRequest } from './validation';

/** The operation, as idempotency keys are scoped and metrics labelled; `SMTP` is the relay's DATA. */
export type Endpoint = 'POST /emails' | 'POST /emails/batch' | 'SMTP';

/** One message submitted over SMTP, parsed and validated by the relay (SmtpSubmissions). */
export interface MimeSubmission {
  email: NormalizedEmail;
  /**
   * The message for the id the email is given (the Message-ID the relay writes may carry it), and
   * where the body of a large one was stored as it arrived (NewEmail.raw).
   */
  raw: (emailId: string) => NonNullable<AcceptedEmail['raw']>;
  /** What makes two submissions with one idempotency key "the same message". */
  hash: string;
}

type BatchError = NonNullable<BatchResponse['errors']>[number];

/** What validation accepted, by index in the request, and (permissive batch) what it refused. */
interface Acceptance {
  emails: { index: number; email: NormalizedEmail; raw?: MimeSubmission['raw'] }[];
  /** Refusals reported in the response instead of failing the request; null: any refusal fails it. */
  errors: BatchError[] | null;
  /** The response for the stored emails' ids (and the refusals), given and replayed. */
  respond: (ids: string[], errors: BatchError[] | null) => unknown;
  /** Prefix of a refusal's message when it fails the request, e.g. `emails[3]: `. */
  where: (index: number) => string;
}

/**
 * The send path, one list of named steps for both endpoints:
 * idempotency → validate → sending domain (and its region, if reachable) → quota → persist (with the
 * idempotency record) → dispatch → respond.
 */
@Injectable()
export class SendService {
  private readonly limits: SendLimits;
  private readonly accepted;

  constructor(
    @Inject(EMAILS_CONFIG.token) private readonly config: EmailsConfig,
    private readonly emails: EmailStore,
    private readonly writer: EmailWriter,
    private readonly dispatcher: Dispatcher,
    private readonly idempotency: IdempotencyService,
    private readonly idempotencyRecords: IdempotencyRecords,
    private readonly quota: QuotaService,
    private readonly sendingDomains: SendingDomains,
    private readonly events: EmailEventOutbox,
    private readonly regions: RegionAvailability,
    metrics: MetricsService,
  ) {
    this.limits = sendLimitsOf(config);
    this.accepted = metrics.counter('herald_emails_accepted_total', 'Emails accepted and committed, by endpoint and source', ['endpoint', 'source']);
  }

  send(sender: Sender, body: unknown, idempotencyKey: string | null, source: EmailSource = 'api'): Promise<SendResponse> {
    return this.accept(sender, 'POST /emails', body, idempotencyKey, source, () => ({
      emails: [{ index: 0, email: orThrow(validateSendRequest(body, this.limits)) }],
      errors: null,
      respond: ([id]): SendResponse => ({ id }),
      where: () => '',
    })) as Promise<SendResponse>;
  }

  /**
   * The SMTP relay's send: the same steps as POST /emails for one email already parsed from its
   * MIME message, which is stored with it and sent as is. Throws the same HeraldErrors
   * (forbidden_from_domain, *_quota_exceeded, idempotency conflicts) for the relay to translate.
   */
  sendMime(sender: Sender, submission: MimeSubmission, idempotencyKey: string | null): Promise<SendResponse> {
    const { email, raw, hash } = submission;
    return this.accept(sender, 'SMTP', hash, idempotencyKey, 'smtp', () => ({
      emails: [{ index: 0, email, raw }],
      errors: null,
      respond: ([first]): SendResponse => ({ id: first }),
      where: () => '',
    })) as Promise<SendResponse>;
  }

  sendBatch(sender: Sender, body: unknown, mode: 'strict' | 'permissive', idempotencyKey: string | null): Promise<BatchResponse> {
    return this.accept(sender, 'POST /emails/batch', { mode, body }, idempotencyKey, 'api', () => {
      const { results } = orThrow(validateBatchRequest(body, this.limits));
      const where = (index: number) => `emails[${index}]: `;
      const respond = (ids: string[], errors: BatchError[] | null): BatchResponse => ({
        data: ids.map((id) => ({ id })),
        ...(errors && { errors: [...errors].sort((x, y) => x.index - y.index) }),
      });
      if (mode === 'strict') {
        const emails = results.map((result, index) => ({ index, email: orThrow(result, where(index)) }));
        return { emails, errors: null, respond, where };
      }
      const emails: Acceptance['emails'] = [];
      const errors: BatchError[] = [];
      results.forEach((result, index) =>
        result.ok ? emails.push({ index, email: result.value }) : errors.push({ index, message: result.error.message }),
      );
      return { emails, errors, respond, where };
    }) as Promise<BatchResponse>;
  }

  private async accept(
    sender: Sender,
    endpoint: Endpoint,
    /** What makes two requests "the same": the body, and for batch the validation mode. */
    body: unknown,
    key: string | null,
    source: EmailSource,
    validate: () => Acceptance,
  ): Promise<unknown> {
    const scope = key ? { teamId: sender.teamId, endpoint, key } : null;
    const hash = scope ? requestHash(body) : '';
    const begun = scope ? await this.idempotency.begin(scope, hash) : null;
    if (begun?.kind === 'replay') return begun.body;
    const lease = begun?.lease ?? null;

    let reserved: Reservation | null = null;
    try {
      const acceptance = validate();
      const rows = await this.route(sender, acceptance, source, key);
      const count = rows.reduce((n, r) => n + r.email.recipients.length, 0);
      if (count > 0) {
        const backstop = (monthStart: Date, dayStart: Date) => this.emails.recipientsAcceptedSince(sender.teamId, monthStart, dayStart);
        reserved = await this.quota.reserve(sender.teamId, sender.plan, count, new Date(), backstop);
      }

      const response = acceptance.respond(
        rows.map((r) => r.id),
        acceptance.errors,
      );
      const { replay, events } = await this.persist(rows, lease && { lease, response });
      if (replay) {
        if (reserved) await this.quota.release(sender.teamId, reserved);
        reserved = null;
        return replay.body;
      }
      reserved = null;
      this.accepted.inc({ endpoint, source }, rows.length);

      // Committed already: a broker that does not ack in time delays the answer no further (the outbox relays).
      await atMost(this.dispatcher.dispatch(rows.filter((r) => !r.email.scheduledAt)), this.config.DISPATCH_WAIT_MS);
      this.events.publish(events);
      // finish() never throws: the Postgres record backs the key if Redis misses it.
      if (lease) await this.idempotency.finish(lease, 200, response);
      return response;
    } catch (error) {
      if (reserved) await this.quota.release(sender.teamId, reserved).catch(() => undefined);
      if (lease) await this.idempotency.abandon(lease).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Each email goes out from its `from` domain, which the team must have verified, and from that
   * domain's region, whichever region accepted it. A refused domain fails the request, or in a
   * permissive batch joins the reported errors.
   *
   * A batch's emails all go out from one region: the first accepted email's. Each region's emails
   * are stored in that region's database (issue 15), and a batch is committed in one transaction,
   * with its idempotency record, so that it is accepted whole or not at all; across two databases
   * a failure between the commits would leave half a batch accepted, and a retry would send that
   * half twice. An email from another region's domain is refused like a refused domain.
   */
  private async route(sender: Sender, acceptance: Acceptance, source: EmailSource, key: string | null): Promise<AcceptedEmail[]> {
    // A batch's emails mostly share a domain or two: each is resolved once per request.
    const resolved = new Map<string, Promise<{ region: string }>>();
    const resolve = (domain: string) => {
      let found = resolved.get(domain);
      if (!found) resolved.set(domain, (found = this.sendingDomains.resolve(sender.teamId, domain, sender.restrictedDomainId)));
      return found;
    };
    // The outbox row of the request's emails sent now, one per region; a scheduled email has its own.
    const dispatchIds = new Map<string, string>();
    const dispatchIdOf = (region: string) => {
      let dispatchId = dispatchIds.get(region);
      if (!dispatchId) dispatchIds.set(region, (dispatchId = newRegionalId(region)));
      return dispatchId;
    };
    const rows: AcceptedEmail[] = [];
    let batchRegion: string | undefined;
    for (const { index, email, raw } of acceptance.emails) {
      let region: string;
      try {
        ({ region } = await resolve(email.fromDomain));
        // A region whose NATS this process cannot reach: 503, rather than a 200 for an email that waits there unseen.
        this.regions.assertReachable(region);
        batchRegion ??= region;
        if (region !== batchRegion) throw crossRegionBatch(email.fromDomain, region, batchRegion);
      } catch (error) {
        if (!acceptance.errors || !isHeraldError(error)) throw prefixed(error, acceptance.where(index));
        acceptance.errors.push({ index, message: error.message });
        continue;
      }
      // The id names the region whose database and stream hold the email (newRegionalId).
      const emailId = newRegionalId(region);
      const dispatchId = email.scheduledAt ? emailId : dispatchIdOf(region);
      rows.push({
        id: emailId,
        teamId: sender.teamId,
        region,
        source,
        apiKeyId: sender.apiKeyId,
        idempotencyKey: key,
        dispatchId,
        email,
        ...(raw && { raw: raw(emailId) }),
      });
    }
    return rows;
  }

  /**
   * Commits the emails, and with a key the idempotency record, in one transaction. If another
   * request committed the same key first (possible only when Redis lost its record), returns
   * that request's response to replay (or throws 409 when its payload differed).
   */
  private async persist(
    rows: AcceptedEmail[],
    idempotency: { lease: Lease; response: unknown } | null,
  ): Promise<{ replay: Replay | null; events: EmailEventRecord[] }> {
    if (!idempotency) return { replay: null, events: await this.writer.insert(rows) };
    const { lease, response } = idempotency;
    try {
      const events = await this.emails.insert(rows, (tx) =>
        this.idempotencyRecords.insert(tx, { ...lease.scope, requestHash: lease.requestHash, statusCode: 200, response }),
      );
      return { replay: null, events };
    } catch (error) {
      if (!isIdempotencyConflict(error)) throw error;
      return { replay: await this.idempotency.replayCommitted(lease), events: [] };
    }
  }
}

function crossRegionBatch(domain: string, region: string, batchRegion: string): HeraldError {
  return new HeraldError(
    'validation_error',
    `${domain} sends from ${region}, and this batch's emails before it from ${batchRegion}. ` +
      `A batch's emails must all send from domains of one region: send one batch per region.`,
  );
}

function orThrow<T>(result: Validated<T>, where = ''): T {
  if (result.ok) return result.value;
  throw prefixed(result.error, where);
}

function prefixed(error: unknown, where: string): unknown {
  if (!where || !isHeraldError(error)) return error;
  return new HeraldError(error.code, `${where}${error.message}`, error.retryAfterSeconds);
}

/** Waits for `work` (which never rejects), but no longer than `ms`; the work goes on regardless. */
async function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
