import { Injectable } from '@nestjs/common';
import { BroadcastEmailsRepository } from '@herald/messages';
import { BroadcastRecipientsRepository } from './broadcast-recipients.repository';
import { linkId, presentRecipient, validateClickedLinksQuery, validateRecipientsQuery } from './broadcast-reports';
import { BroadcastsService } from './broadcasts.service';

/**
 * What became of a broadcast's emails, as Resend's SDK asks it: the recipients who had an event
 * (from the email records, which libs/messages owns; `unsubscribed` from the broadcast's own
 * record) and the links clicked. Another team's broadcast is not found.
 */
@Injectable()
export class BroadcastReportsService {
  constructor(
    private readonly broadcasts: BroadcastsService,
    private readonly emails: BroadcastEmailsRepository,
    private readonly recipients: BroadcastRecipientsRepository,
  ) {}

  async listRecipients(teamId: string, id: string, query: unknown) {
    const { id: broadcastId } = await this.broadcasts.find(teamId, id);
    const q = validateRecipientsQuery(query);
    if (q.type === 'unsubscribed') {
      const among = q.email === null ? null : await this.emails.idsTo(teamId, broadcastId, q.email);
      const page = await this.recipients.unsubscribed(teamId, broadcastId, q.page, among);
      const addresses = await this.emails.addresses(
        teamId,
        page.items.map((i) => i.emailId),
      );
      const data = page.items
        .map((i) => ({ emailId: i.emailId, contactId: i.contactId, address: addresses.get(i.emailId) }))
        .filter((i): i is { emailId: string; contactId: string; address: string } => i.address !== undefined)
        .map((i) => presentRecipient('unsubscribed', i, i.contactId));
      return { object: 'list' as const, has_more: page.hasMore, data };
    }
    const page = await this.emails.withEvent(
      teamId,
      broadcastId,
      { event: q.type, email: q.email ?? undefined, bounceType: q.bounceType ?? undefined },
      q.page,
    );
    const contacts = await this.recipients.contactsOf(
      teamId,
      broadcastId,
      page.items.map((i) => i.emailId),
    );
    return {
      object: 'list' as const,
      has_more: page.hasMore,
      data: page.items.map((hit) => presentRecipient(q.type, hit, contacts.get(hit.emailId) ?? null)),
    };
  }

  async listClickedLinks(teamId: string, id: string, query: unknown) {
    const { id: broadcastId } = await this.broadcasts.find(teamId, id);
    const page = await this.emails.clickedLinks(teamId, broadcastId, validateClickedLinksQuery(query));
    return {
      object: 'list' as const,
      has_more: page.hasMore,
      data: page.items.map((l) => ({ id: linkId(l.url), url: l.url, clicks: l.clicks, unique_clicks: l.uniqueClicks })),
    };
  }
}
