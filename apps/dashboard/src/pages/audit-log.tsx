import { keepPreviousData } from '@tanstack/react-query';
import { AuditEntries } from '../components/audit-entries';
import { Pager, useKeysetPages } from '../components/pager';
import { EmptyState, ErrorAlert, PageHeader } from '../components/ui';
import { useTeamQuery } from '../lib/queries';
import type { AuditPage } from '../lib/types';

const PAGE = 50;

/** The team's audit log (owners and admins): its own changes and its members' sign-ins and security changes. */
export function AuditLogPage() {
  const pages = useKeysetPages();
  const log = useTeamQuery<AuditPage>('/audit-log', { limit: PAGE, after: pages.after }, { placeholderData: keepPreviousData });
  const entries = log.data?.data ?? [];
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Who did what in this team, newest first: API keys, members and invitations, and the sign-ins and security changes of its members."
      />
      <ErrorAlert error={log.error} title="The audit log could not load" />
      {log.data && entries.length === 0 && (
        <EmptyState title="Nothing recorded yet">Sign-ins, API key changes and member changes appear here as they happen.</EmptyState>
      )}
      {entries.length > 0 && <AuditEntries entries={entries} />}
      <Pager pages={pages} hasMore={log.data?.has_more} lastId={entries[entries.length - 1]?.id} />
    </>
  );
}
