import { Injectable } from '@nestjs/common';
import { HeraldError, isUuid } from '@herald/core';
import { DomainsRepository } from '@herald/domains';
import { EmailFeedRepository, EmailStore, type EmailRecord } from '@herald/messages';
import { SuppressionsRepository } from '@herald/suppressions';
import { DmarcLookup } from './dmarc-lookup';
import type { Insight, OutcomeFacts, RecipientHistory } from './insight.types';
import { presentInsights, type InsightList } from './insights.presenter';
import { InsightsRepository } from './insights.repository';
import { scanMessage } from './message-scan';
import { headerBlock, reviewedEmail, sendingDomainFacts } from './reviewed-email';
import { CONTENT_RULES, evaluate, ordered, OUTCOME_RULES } from './rules';

/**
 * Per-email deliverability insights. Nothing runs on the send path: content insights are computed
 * the first time an email's insights are asked for (HTML scanned, DMARC looked up through a cache)
 * and kept in email_insights, so the email answers the same findings from then on; outcome
 * insights are read from the email's events each time, and grow as its events arrive.
 */
/** At most this many earlier troubles are read per email: the finding lists a few. */
const HISTORY_LIMIT = 10;

@Injectable()
export class InsightsService {
  constructor(
    private readonly emails: EmailStore,
    private readonly feed: EmailFeedRepository,
    private readonly domains: DomainsRepository,
    private readonly dmarc: DmarcLookup,
    private readonly insights: InsightsRepository,
    private readonly suppressions: SuppressionsRepository,
  ) {}

  async forEmail(teamId: string, id: string): Promise<InsightList> {
    if (!isUuid(id)) throw new HeraldError('invalid_parameter', 'The `id` must be a valid UUID.');
    const record = await this.emails.get(teamId, id);
    if (!record) throw new HeraldError('not_found', 'Email not found');
    const [content, outcome] = await Promise.all([this.content(record), this.outcome(teamId, id)]);
    return presentInsights(ordered([...content, ...evaluate(OUTCOME_RULES, outcome)]));
  }

  private async content(record: EmailRecord): Promise<Insight[]> {
    const stored = await this.insights.stored(record.teamId, record.id);
    if (stored) return stored;
    const mime = record.source === 'smtp' ? await this.feed.storedMime(record.teamId, record.id) : null;
    const email = reviewedEmail(record, mime ? headerBlock(mime) : {});
    const domain = await this.domains.findByName(record.teamId, email.fromDomain);
    const [dmarc, history] = await Promise.all([
      this.dmarc.facts(email.fromDomain, domain),
      this.history(
        record.teamId,
        email.recipients.map((r) => r.toLowerCase()),
        record.createdAt,
      ),
    ]);
    const found = evaluate(CONTENT_RULES, { email, scan: scanMessage(email.html, email.text), domain: sendingDomainFacts(domain), dmarc, history });
    // Without a DMARC answer the findings are incomplete: answered now, computed again next time.
    return dmarc.kind === 'unknown' ? found : this.insights.keep(record.teamId, record.id, found);
  }

  /**
   * The recipients' trouble before `before` (the email's acceptance): suppression-list entries,
   * then bounces of the team's earlier emails to an address not on the list, newest first.
   */
  private async history(teamId: string, addresses: string[], before: Date): Promise<RecipientHistory[]> {
    const entries = await this.suppressions.entriesBefore(teamId, addresses, before, HISTORY_LIMIT);
    const suppressed: RecipientHistory[] = entries.map((entry) => ({
      address: entry.email,
      kind: 'suppressed',
      origin: entry.origin,
      at: entry.createdAt,
      detail: entry.reason,
    }));
    if (suppressed.length >= HISTORY_LIMIT) return suppressed;
    const except = entries.map((entry) => entry.email);
    const bounces = await this.feed.bouncedBefore(teamId, addresses, before, except, HISTORY_LIMIT - suppressed.length);
    return [
      ...suppressed,
      ...bounces.map((b): RecipientHistory => ({ address: b.address, kind: 'bounced', origin: null, at: b.at, detail: b.detail })),
    ];
  }

  private async outcome(teamId: string, emailId: string): Promise<OutcomeFacts> {
    const [events, recipients] = await Promise.all([this.feed.events(teamId, emailId), this.feed.recipients(teamId, emailId)]);
    return {
      events,
      recipients: recipients.map((r) => ({ address: r.address, status: r.status, lastResponse: r.lastResponse })),
    };
  }
}
