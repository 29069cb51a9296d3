import type { ClaimedEmail } from './delivery-state.types';
import type { EmailFacts } from './email-events';
import type { EmailEvent, EmailRecord, EmailSource, EmailSummary } from './email-record.types';

/** A row of `emails`, as every statement of this context reads it (each selects the columns it needs). */
export interface EmailRow {
  id: string;
  team_id: string;
  region: string;
  source: EmailSource;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[] | null;
  bcc_addresses: string[] | null;
  reply_to: string[] | null;
  subject: string;
  html: string | null;
  text_body: string | null;
  headers: Record<string, string> | null;
  tags: { name: string; value: string }[] | null;
  message_id: string;
  last_event: EmailEvent;
  scheduled_at: Date | null;
  created_at: Date;
  dispatch_count: number;
  /** Bodies filled in when read (template-bodies.ts); null for an email stored with its own. */
  template_id?: string | null;
  template_values?: string[] | null;
}

export const SUMMARY_COLUMNS = `id, team_id, region, source, from_address, to_addresses, cc_addresses, bcc_addresses,
  reply_to, subject, message_id, last_event, scheduled_at, created_at`;

type SummaryRow = Pick<
  EmailRow,
  | 'id'
  | 'team_id'
  | 'region'
  | 'source'
  | 'from_address'
  | 'to_addresses'
  | 'cc_addresses'
  | 'bcc_addresses'
  | 'reply_to'
  | 'subject'
  | 'message_id'
  | 'last_event'
  | 'scheduled_at'
  | 'created_at'
>;
type RecordRow = SummaryRow & Pick<EmailRow, 'html' | 'text_body' | 'headers' | 'tags' | 'template_id' | 'template_values'>;
type FactsRow = Pick<EmailRow, 'id' | 'team_id' | 'region' | 'from_address' | 'subject' | 'message_id' | 'tags' | 'headers' | 'created_at'>;

/** What a claim's UPDATE returns: the email's sending columns, when it became due, and its last_event before the claim. */
export type ClaimRow = FactsRow &
  Pick<EmailRow, 'to_addresses' | 'cc_addresses' | 'reply_to' | 'html' | 'text_body' | 'dispatch_count' | 'template_id' | 'template_values'> & {
    due_at: Date;
    before: EmailEvent;
  };

export function toSummary(row: SummaryRow): EmailSummary {
  return {
    id: row.id,
    teamId: row.team_id,
    region: row.region,
    source: row.source,
    from: row.from_address,
    to: row.to_addresses,
    cc: row.cc_addresses,
    bcc: row.bcc_addresses,
    replyTo: row.reply_to,
    subject: row.subject,
    messageId: row.message_id,
    lastEvent: row.last_event,
    scheduledAt: row.scheduled_at,
    createdAt: row.created_at,
  };
}

export function toRecord(row: RecordRow): EmailRecord {
  return { ...toSummary(row), html: row.html, text: row.text_body, headers: row.headers, tags: row.tags };
}

export function toFacts(row: FactsRow): EmailFacts {
  return {
    id: row.id,
    teamId: row.team_id,
    region: row.region,
    from: row.from_address,
    subject: row.subject,
    messageId: row.message_id,
    tags: row.tags,
    headers: row.headers,
    createdAt: row.created_at,
  };
}

export function toClaimedEmail(row: ClaimRow, token: string): ClaimedEmail {
  return {
    ...toFacts(row),
    token,
    generation: row.dispatch_count,
    firstClaim: row.before === 'queued' || row.before === 'scheduled',
    to: row.to_addresses,
    cc: row.cc_addresses,
    replyTo: row.reply_to,
    html: row.html,
    text: row.text_body,
    dueAt: row.due_at,
    recipients: [],
    attachments: [],
    mime: null,
  };
}
