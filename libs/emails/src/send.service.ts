import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CONFIG, HeraldConfig } from '@herald/config';
import { HeraldError, newId } from '@herald/core';
import { IdempotencyRecords, IdempotencyService, isIdempotencyConflict, Lease, Replay } from '@herald/idempotency';
import { QuotaService } from '@herald/limits';
import { MetricsService } from '@herald/observability';
import { Dispatcher } from './dispatcher.service';
import { sendLimitsOf } from './send-limits';
import { EmailRepository, NewEmail } from './email.repository';
import { EmailWriter } from './email-writer';
import { EmailSource, Sender } from './email.types';
import {
  NormalizedEmail,
  SendLimits,
  Validated,
  requestHash,
  validateBatchRequest,
  validateSendRequest,
} from './validation';

export type Endpoint = 'POST /emails' | 'POST /emails/batch';

export interface SendResponse {
  id: string;
}

export interface BatchResponse {
  data: SendResponse[];
  errors?: { index: number; message: string }[];
}

/** The accepted part of a request: the emails to store and the response to give (and replay). */
interface Acceptance<R> {
  emails: NormalizedEmail[];
  respond: (ids: string[]) => R;
}

/**
 * The send path, one list of named steps for both endpoints:
 * idempotency → validate → quota → persist (with the idempotency record) → dispatch → respond.
 */
@Injectable()
export class SendService {
  private readonly limits: SendLimits;
  private readonly accepted;

  constructor(
    @Inject(CONFIG) private readonly config: HeraldConfig,
    private readonly db: DataSource,
    private readonly emails: EmailRepository,
    private readonly writer: EmailWriter,
    private readonly dispatcher: Dispatcher,
    private readonly idempotency: IdempotencyService,
    private readonly idempotencyRecords: IdempotencyRecords,
    private readonly quota: QuotaService,
    metrics: MetricsService,
  ) {
    this.limits = sendLimitsOf(config);
    this.accepted = metrics.counter('herald_emails_accepted_total', 'Emails accepted and committed, by endpoint and source', [
      'endpoint',
      'source',
    ]);
  }

  send(sender: Sender, body: unknown, idempotencyKey: string | null, source: EmailSource = 'api'): Promise<SendResponse> {
    return this.accept(sender, 'POST /emails', body, idempotencyKey, source, () => {
      const email = orThrow(validateSendRequest(body, this.limits));
      return { emails: [email], respond: ([id]) => ({ id }) };
    });
  }

  sendBatch(sender: Sender, body: unknown, mode: 'strict' | 'permissive', idempotencyKey: string | null): Promise<BatchResponse> {
    return this.accept(sender, 'POST /emails/batch', { mode, body }, idempotencyKey, 'api', () => {
      const { results } = orThrow(validateBatchRequest(body, this.limits));
      if (mode === 'strict') {
        const emails = results.map((result, index) => orThrow(result, `emails[${index}]`));
        return { emails, respond: (ids) => ({ data: ids.map((id) => ({ id })) }) };
      }
      const emails: NormalizedEmail[] = [];
      const errors: { index: number; message: string }[] = [];
      results.forEach((result, index) => (result.ok ? emails.push(result.value) : errors.push({ index, message: result.error.message })));
      return { emails, respond: (ids) => ({ data: ids.map((id) => ({ id })), errors }) };
    });
  }

  private async accept<R>(
    sender: Sender,
    endpoint: Endpoint,
    /** What makes two requests "the same": the body, and for batch the validation mode. */
    body: unknown,
    key: string | null,
    source: EmailSource,
    validate: () => Acceptance<R>,
  ): Promise<R> {
    const scope = key ? { teamId: sender.teamId, endpoint, key } : null;
    const hash = scope ? requestHash(body) : '';
    const begun = scope ? await this.idempotency.begin(scope, hash) : null;
    if (begun?.kind === 'replay') return begun.body as R;
    const lease = begun?.lease ?? null;

    let reserved: { count: number; at: Date } | null = null;
    try {
      const { emails, respond } = validate();
      const count = emails.reduce((n, e) => n + e.recipients.length, 0);
      const at = new Date();
      if (count > 0) {
        await this.quota.reserve(sender.teamId, sender.plan, count, at);
        reserved = { count, at };
      }

      const rows: NewEmail[] = emails.map((email) => ({
        id: newId(),
        teamId: sender.teamId,
        region: sender.homeRegion,
        source,
        idempotencyKey: key,
        email,
      }));
      const response = respond(rows.map((r) => r.id));
      const replay = await this.persist(rows, lease && { lease, response });
      if (replay) {
        if (reserved) await this.quota.release(sender.teamId, reserved.count, reserved.at);
        reserved = null;
        return replay.body as R;
      }
      reserved = null;
      this.accepted.inc({ endpoint, source }, rows.length);
      if (this.config.HERALD_FAILPOINT === 'crash-after-commit') process.kill(process.pid, 'SIGKILL');

      await this.dispatcher.dispatch(
        rows.filter((r) => !r.email.scheduledAt).map((r) => ({ emailId: r.id, teamId: r.teamId, region: r.region })),
      );
      // complete() never throws: the Postgres record backs the key if Redis misses it.
      if (lease) await this.idempotency.complete(lease, 200, response);
      return response;
    } catch (error) {
      if (reserved) await this.quota.release(sender.teamId, reserved.count, reserved.at).catch(() => undefined);
      if (lease) await this.idempotency.abandon(lease).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Commits the emails, and with a key the idempotency record, in one transaction. If another
   * request committed the same key first (possible only when Redis lost its record), returns
   * that request's response to replay (or throws 409 when its payload differed).
   */
  private async persist(
    rows: NewEmail[],
    idempotency: { lease: Lease; response: unknown } | null,
  ): Promise<Replay | null> {
    if (!idempotency) {
      await this.writer.insert(rows);
      return null;
    }
    const { lease, response } = idempotency;
    try {
      await this.db.transaction(async (manager) => {
        await this.idempotencyRecords.insert(manager, { ...lease.scope, requestHash: lease.requestHash, statusCode: 200, response });
        await this.emails.insert(rows, manager);
      });
      return null;
    } catch (error) {
      if (!isIdempotencyConflict(error)) throw error;
      return this.idempotency.replayCommitted(lease);
    }
  }

}

function orThrow<T>(result: Validated<T>, where?: string): T {
  if (result.ok) return result.value;
  if (!where) throw result.error;
  throw new HeraldError(result.error.code, `${where}: ${result.error.message}`);
}
