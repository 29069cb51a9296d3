import { Foundation1764100000000 } from './1764100000000-foundation';
import { Domains1764200000000 } from './1764200000000-domains';
import { Suppressions1764300000000 } from './1764300000000-suppressions';
import { Webhooks1764400000000 } from './1764400000000-webhooks';
import { WebhookDeliveries1764500000000 } from './1764500000000-webhook-deliveries';
import { Delivery1764600000000 } from './1764600000000-delivery';
import { SmtpMessages1764700000000 } from './1764700000000-smtp-messages';
import { WebhookHealth1764800000000 } from './1764800000000-webhook-health';
import { DispatchOutbox1764900000000 } from './1764900000000-dispatch-outbox';
import { Lz4Bodies1765000000000 } from './1765000000000-lz4-bodies';
import { ResourceEvents1765100000000 } from './1765100000000-resource-events';
import { StrandedLeases1765200000000 } from './1765200000000-stranded-leases';
import { People1765300000000 } from './1765300000000-people';
import { EmailFeed1765400000000 } from './1765400000000-email-feed';
import { EmailApiKey1765500000000 } from './1765500000000-email-api-key';
import { SuppressionSearch1765501000000 } from './1765501000000-suppression-search';
import { EngagementFirsts1765510000000 } from './1765510000000-engagement-firsts';
import { Metrics1765520000000 } from './1765520000000-metrics';
import { EmailInsights1765530000000 } from './1765530000000-email-insights';
import { Contacts1765540000000 } from './1765540000000-contacts';
import { Broadcasts1765545000000 } from './1765545000000-broadcasts';
import { EditorImages1765550000000 } from './1765550000000-editor-images';
import { BroadcastUnsubscribes1765560000000 } from './1765560000000-broadcast-unsubscribes';
import { EmailTemplates1765600000000 } from './1765600000000-email-templates';
import { MimeUploads1765605000000 } from './1765605000000-mime-uploads';
import { WebhookDuePerEndpoint1765610000000 } from './1765610000000-webhook-due-per-endpoint';
import { DispatchCalled1765615000000 } from './1765615000000-dispatch-called';
import { ContactImportJobs1765620000000 } from './1765620000000-contact-import-jobs';
import { EmailPlaneUnboundFromTeams1765625000000 } from './1765625000000-email-plane-unbound-from-teams';
import { WebhookMessagesUnbound1765626000000 } from './1765626000000-webhook-messages-unbound';
import { BroadcastLedgerUnbound1765627000000 } from './1765627000000-broadcast-ledger-unbound';

/** Every migration, in order. A new migration is a new file listed here. */
export const migrations = [
  Foundation1764100000000,
  Domains1764200000000,
  Suppressions1764300000000,
  Webhooks1764400000000,
  WebhookDeliveries1764500000000,
  Delivery1764600000000,
  SmtpMessages1764700000000,
  WebhookHealth1764800000000,
  DispatchOutbox1764900000000,
  Lz4Bodies1765000000000,
  ResourceEvents1765100000000,
  StrandedLeases1765200000000,
  People1765300000000,
  EmailFeed1765400000000,
  EmailApiKey1765500000000,
  SuppressionSearch1765501000000,
  EngagementFirsts1765510000000,
  Metrics1765520000000,
  EmailInsights1765530000000,
  Contacts1765540000000,
  Broadcasts1765545000000,
  EditorImages1765550000000,
  BroadcastUnsubscribes1765560000000,
  EmailTemplates1765600000000,
  MimeUploads1765605000000,
  WebhookDuePerEndpoint1765610000000,
  DispatchCalled1765615000000,
  ContactImportJobs1765620000000,
  EmailPlaneUnboundFromTeams1765625000000,
  WebhookMessagesUnbound1765626000000,
  BroadcastLedgerUnbound1765627000000,
];
