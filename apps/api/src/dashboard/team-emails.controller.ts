import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import MailComposer from 'nodemailer/lib/mail-composer';
import { restTimestamp } from '@herald/core';
import { DomainsService } from '@herald/domains';
import { EmailsService } from '@herald/emails';
import { InsightsService } from '@herald/insights';
import { EmailFeedRepository } from '@herald/messages';
import { DashboardController } from './dashboard.guard';
import { parseFeedQuery } from './email-feed.query';

/** The Emails page: the filtered activity feed, an email's whole story, and its MIME. */
@DashboardController()
@Controller('dashboard/api/teams/:teamId/emails')
export class TeamEmailsController {
  constructor(
    private readonly feed: EmailFeedRepository,
    private readonly emails: EmailsService,
    private readonly domains: DomainsService,
    private readonly insights: InsightsService,
  ) {}

  @Get()
  async list(@Param('teamId') teamId: string, @Query() query: unknown) {
    const { page, filter, domainId } = parseFeedQuery(query);
    const fromDomain = domainId ? (await this.domains.get(teamId, domainId)).name.toLowerCase() : undefined;
    const { items, hasMore, unavailableRegions } = await this.feed.list(teamId, { ...filter, fromDomain }, page);
    return {
      object: 'list',
      has_more: hasMore,
      // The regions whose emails this page could not include: their database does not answer.
      unavailable_regions: unavailableRegions,
      data: items.map((e) => ({
        id: e.id,
        from: e.from,
        to: e.to,
        subject: e.subject,
        last_event: e.lastEvent,
        created_at: restTimestamp(e.createdAt),
        domain_id: e.domainId,
        api_key_id: e.apiKeyId,
      })),
    };
  }

  @Get(':id')
  async get(@Param('teamId') teamId: string, @Param('id') id: string) {
    const email = await this.emails.get(teamId, id);
    const [recipients, events] = await Promise.all([this.feed.recipients(teamId, email.id), this.feed.events(teamId, email.id)]);
    return {
      ...email,
      recipients: recipients.map((r) => ({
        email: r.address,
        kind: r.kind,
        status: r.status,
        last_event: lastEventOf(r.status),
        attempts: r.attempts,
        detail: r.lastResponse,
      })),
      events: events.map((e) => ({
        id: e.id,
        type: e.type,
        created_at: restTimestamp(e.createdAt),
        recipient: e.recipients[0] ?? null,
        data: e.data,
      })),
      headers: headerList(email),
    };
  }

  @Get(':id/insights')
  insightsOf(@Param('teamId') teamId: string, @Param('id') id: string) {
    return this.insights.forEmail(teamId, id);
  }

  @Get(':id/raw')
  async raw(@Param('teamId') teamId: string, @Param('id') id: string, @Res() reply: FastifyReply) {
    const email = await this.emails.get(teamId, id);
    const mime = (await this.feed.storedMime(teamId, email.id)) ?? (await compose(email));
    return reply
      .type('message/rfc822')
      .header('content-disposition', `attachment; filename="${email.id}.eml"`)
      .header('cache-control', 'no-store')
      .send(mime);
  }
}

type RestEmail = Awaited<ReturnType<EmailsService['get']>>;

/** A recipient's status in the words of `last_event`. */
function lastEventOf(status: string): string {
  switch (status) {
    case 'sending':
      return 'sent';
    case 'deferred':
      return 'delivery_delayed';
    default:
      return status;
  }
}

/** The message's headers as the recipient sees the main ones, then the customer's own. */
function headerList(email: RestEmail): { name: string; value: string }[] {
  const list = [
    { name: 'From', value: email.from },
    { name: 'To', value: email.to.join(', ') },
    ...(email.cc?.length ? [{ name: 'Cc', value: email.cc.join(', ') }] : []),
    ...(email.reply_to?.length ? [{ name: 'Reply-To', value: email.reply_to.join(', ') }] : []),
    { name: 'Subject', value: email.subject },
    { name: 'Message-ID', value: email.message_id },
  ];
  for (const [name, value] of Object.entries(email.headers ?? {})) list.push({ name, value: String(value) });
  return list;
}

/** An API email's message rebuilt from its record (unsigned; the delivered copy also carries DKIM and Return-Path). */
function compose(email: RestEmail): Promise<Buffer> {
  const composer = new MailComposer({
    from: email.from,
    to: email.to,
    cc: email.cc ?? undefined,
    replyTo: email.reply_to ?? undefined,
    subject: email.subject,
    html: email.html ?? undefined,
    text: email.text ?? undefined,
    messageId: email.message_id,
    date: new Date(email.created_at.replace(' ', 'T').replace(/\+00$/, 'Z')),
    headers: email.headers ?? {},
  });
  return new Promise((resolve, reject) => composer.compile().build((error, message) => (error ? reject(error) : resolve(message))));
}
