import { Inject, Injectable } from '@nestjs/common';
import { HeraldError, isUuid, newId } from '@herald/core';
import { ContactsDirectory } from '@herald/contacts';
import { SendingDomains } from '@herald/domains';
import { parseScheduledAt } from '@herald/emails';
import { parsePage } from '@herald/http';
import { BroadcastEmailsRepository, Dispatcher, EmailStore } from '@herald/messages';
import { bodiesOf, checkDocument } from './broadcast-bodies';
import {
  fromParts,
  validatePreview,
  validateCreateBroadcast,
  validateSendBroadcast,
  validateTestRecipients,
  validateUpdateBroadcast,
} from './broadcast-input.validation';
import { BroadcastLinks } from './broadcast-links';
import { BroadcastQuota } from './broadcast-quota';
import { filledEmail, prepareBroadcast, recipientEmail } from './broadcast-message';
import { broadcastRef, presentBroadcast, presentBroadcastList, type BroadcastBody } from './broadcast.presenter';
import type { Broadcast, BroadcastContent, DeliveryCounts } from './broadcast.types';
import { BROADCASTS_CONFIG, type BroadcastsConfig } from './broadcasts.config';
import { BroadcastsRepository } from './broadcasts.repository';
import { BroadcastRunner } from './broadcast-runner.service';

const notFound = () => new HeraldError('not_found', 'Broadcast not found');

/**
 * Broadcasts as the REST API and the dashboard see them: drafts that are edited, then sent now
 * or at a time (the fan-out itself is BroadcastRunner's), cancelled while scheduled, deleted
 * while drafts. Full-access keys only, as at Resend (ApiKeyGuard refuses sending_access keys).
 */
@Injectable()
export class BroadcastsService {
  constructor(
    @Inject(BROADCASTS_CONFIG.token) private readonly config: BroadcastsConfig,
    private readonly repository: BroadcastsRepository,
    private readonly contacts: ContactsDirectory,
    private readonly sendingDomains: SendingDomains,
    private readonly runner: BroadcastRunner,
    private readonly links: BroadcastLinks,
    private readonly emails: EmailStore,
    private readonly dispatcher: Dispatcher,
    private readonly quota: BroadcastQuota,
    private readonly broadcastEmails: BroadcastEmailsRepository,
  ) {}

  async create(teamId: string, body: unknown): Promise<Broadcast> {
    const input = validateCreateBroadcast(body);
    await this.checkContent(teamId, input.content);
    const scheduledAt = input.send ? this.scheduleOf(input.scheduledAt) : null;
    if (input.send) {
      await this.checkSendable(teamId, input.content);
      await this.quota.checkSend(teamId, input.content);
    }
    const id = newId();
    const bodies = input.send ? bodiesOf(input.content) : null;
    const content = bodies ? { ...input.content, ...bodies } : input.content;
    await this.repository.insert(teamId, id, content, input.send ? (scheduledAt ? 'scheduled' : 'queued') : 'draft', scheduledAt);
    if (input.send && !scheduledAt) this.runner.kick();
    return (await this.repository.get(teamId, id))!;
  }

  /** A new draft with the broadcast's content (whatever its status), as Resend's duplicate. */
  async duplicate(teamId: string, id: string): Promise<Broadcast> {
    const source = await this.find(teamId, id);
    const copy = newId();
    const { name, segmentId, topicId, from, subject, replyTo, previewText, html, text, document } = source;
    await this.repository.insert(
      teamId,
      copy,
      { name, segmentId, topicId, from, subject, replyTo, previewText, html, text, document },
      'draft',
      null,
    );
    return (await this.repository.get(teamId, copy))!;
  }

  async get(teamId: string, id: string): Promise<BroadcastBody> {
    const broadcast = await this.find(teamId, id);
    return presentBroadcast(broadcast, (await this.broadcastEmails.lastEventCounts(teamId, id)) as Partial<DeliveryCounts>);
  }

  async list(teamId: string, query: unknown) {
    return presentBroadcastList(await this.repository.list(teamId, parsePage(query)));
  }

  async update(teamId: string, id: string, body: unknown): Promise<Broadcast> {
    const current = await this.find(teamId, id);
    if (current.status !== 'draft') throw notDraft(current, 'updated');
    const next = validateUpdateBroadcast(body, current);
    await this.checkContent(teamId, next);
    if (!(await this.repository.updateDraft(teamId, id, next))) throw notDraft(await this.find(teamId, id), 'updated');
    return (await this.repository.get(teamId, id))!;
  }

  async send(teamId: string, id: string, body: unknown): Promise<Broadcast> {
    const { scheduledAt: given } = validateSendBroadcast(body);
    const current = await this.find(teamId, id);
    if (current.status !== 'draft') throw notDraft(current, 'sent');
    const scheduledAt = this.scheduleOf(given);
    await this.checkSendable(teamId, current);
    await this.quota.checkSend(teamId, current);
    if (!(await this.repository.schedule(teamId, id, scheduledAt, bodiesOf(current)))) throw notDraft(await this.find(teamId, id), 'sent');
    if (!scheduledAt) this.runner.kick();
    return (await this.repository.get(teamId, id))!;
  }

  async cancel(teamId: string, id: string): Promise<Broadcast> {
    const current = await this.find(teamId, id);
    if (!(await this.repository.cancel(teamId, id))) {
      throw new HeraldError('validation_error', `Only a scheduled broadcast can be cancelled; this one is ${current.status}.`);
    }
    return (await this.repository.get(teamId, id))!;
  }

  async remove(teamId: string, id: string): Promise<{ object: 'broadcast'; id: string; deleted: true }> {
    const current = await this.find(teamId, id);
    if (!(await this.repository.remove(teamId, id))) {
      throw new HeraldError(
        'validation_error',
        `Only a draft or a cancelled broadcast can be deleted; this one is ${current.status}${current.status === 'scheduled' ? ' (cancel it first)' : ''}.`,
      );
    }
    return { ...broadcastRef(id), deleted: true };
  }

  /**
   * The dashboard's test: the broadcast as it stands, to 1–5 addresses now, merge tags filled with
   * their fallbacks (the tag's, else the property's), the unsubscribe link pointing at the page that says it was a test.
   */
  async sendTest(teamId: string, id: string, body: unknown): Promise<{ id: string }> {
    const to = validateTestRecipients(body);
    const broadcast = await this.find(teamId, id);
    const { region } = await this.checkSendable(teamId, broadcast);
    // A test is no broadcast email: not linked to the broadcast, and without List-Unsubscribe.
    const prepared = prepareBroadcast(
      { ...broadcast, id: '', ...bodiesOf(broadcast) },
      { region, unsubscribeBase: await this.links.unsubscribeBase(), returnPathDomain: '', fallbacks: await this.contacts.propertyFallbacks(teamId) },
    );
    const emailId = newId();
    const tester = { contactId: '', email: to[0]!, firstName: null, lastName: null, properties: {} };
    const email = filledEmail(recipientEmail(prepared, tester, emailId, emailId, { link: `${prepared.unsubscribeBase}test`, mailbox: null }));
    const row = { ...email, broadcastId: null, email: { ...email.email, to, recipients: to.map((address) => ({ kind: 'to' as const, address })) } };
    await this.emails.insert([row]);
    await this.dispatcher.dispatch([row]);
    return { id: emailId };
  }

  /** The editor's preview: `{document}` rendered, or `{html, text}` as they are (merge tags left in). */
  preview(body: unknown): { html: string | null; text: string | null } {
    const { document, html, text } = validatePreview(body);
    checkDocument(document);
    return bodiesOf({ document, html, text });
  }

  async find(teamId: string, id: string): Promise<Broadcast> {
    if (!isUuid(id)) throw new HeraldError('invalid_parameter', 'The broadcast id must be a valid UUID.');
    const broadcast = await this.repository.get(teamId, id.toLowerCase());
    if (!broadcast) throw notFound();
    return broadcast;
  }

  /** The segment and topic must be the team's; a document must render. */
  private async checkContent(teamId: string, content: BroadcastContent): Promise<void> {
    checkDocument(content.document);
    if (content.segmentId && !(await this.contacts.getSegment(teamId, content.segmentId))) {
      throw new HeraldError('validation_error', 'The `segment_id` field names no segment of this team.');
    }
    if (content.topicId && !(await this.contacts.getTopic(teamId, content.topicId))) {
      throw new HeraldError('validation_error', 'The `topic_id` field names no topic of this team.');
    }
  }

  /** Sent from a domain the team has verified (403 otherwise, as for an email), to a segment. */
  private async checkSendable(teamId: string, content: BroadcastContent): Promise<{ region: string }> {
    if (!content.segmentId) throw new HeraldError('validation_error', 'The `segment_id` field is required to send a broadcast.');
    return this.sendingDomains.resolve(teamId, fromParts(content.from).domain, null);
  }

  private scheduleOf(given: unknown): Date | null {
    if (given === undefined || given === null) return null;
    const parsed = parseScheduledAt(given, new Date(), this.config.MAX_SCHEDULE_DAYS);
    if (!parsed.ok) throw parsed.error;
    // "now" (or a moment ago) is a send now.
    return parsed.value.getTime() <= Date.now() ? null : parsed.value;
  }
}

function notDraft(b: Broadcast, verb: string): HeraldError {
  return new HeraldError('validation_error', `Only a draft broadcast can be ${verb}; this one is ${b.status}.`);
}
