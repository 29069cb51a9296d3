import { Inject, Injectable } from '@nestjs/common';
import { HeraldError, isUuid } from '@herald/core';
import { EMAILS_CONFIG, EmailsConfig, sendLimitsOf } from './emails.config';
import { EmailStore } from '@herald/messages';
import { type EmailBody, type EmailList, type EmailReference, presentEmail, presentEmailList, presentEmailReference } from './email.presenter';
import { SendLimits, validateListQuery, validateUpdateEmailRequest } from './validation';

const notFound = () => new HeraldError('not_found', 'Email not found');

/** Reading emails and changing scheduled ones. */
@Injectable()
export class EmailsService {
  private readonly limits: SendLimits;

  constructor(
    private readonly emails: EmailStore,
    @Inject(EMAILS_CONFIG.token) config: EmailsConfig,
  ) {
    this.limits = sendLimitsOf(config);
  }

  async get(teamId: string, id: string): Promise<EmailBody> {
    assertId(id);
    const email = await this.emails.get(teamId, id);
    if (!email) throw notFound();
    return presentEmail(email);
  }

  async list(teamId: string, query: unknown): Promise<EmailList> {
    const page = validateListQuery(query);
    if (!page.ok) throw page.error;
    return presentEmailList(await this.emails.list(teamId, page.value));
  }

  async reschedule(teamId: string, id: string, body: unknown): Promise<EmailReference> {
    assertId(id);
    const update = validateUpdateEmailRequest(body, this.limits);
    if (!update.ok) throw update.error;
    if (!(await this.emails.reschedule(teamId, id, update.value.scheduledAt))) throw await this.notScheduled(teamId, id, 'updated');
    return presentEmailReference(id);
  }

  async cancel(teamId: string, id: string): Promise<EmailReference> {
    assertId(id);
    if (!(await this.emails.cancel(teamId, id))) throw await this.notScheduled(teamId, id, 'canceled');
    return presentEmailReference(id);
  }

  private async notScheduled(teamId: string, id: string, verb: string): Promise<HeraldError> {
    if (!(await this.emails.exists(teamId, id))) return notFound();
    return new HeraldError('validation_error', `Only a scheduled email that has not been sent yet can be ${verb}.`);
  }
}

function assertId(id: string): void {
  if (!isUuid(id)) throw new HeraldError('invalid_parameter', 'The `id` must be a valid UUID.');
}
